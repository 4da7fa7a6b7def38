"""The outside-written held-out sets of issue 45: frozen as written, and kept as regression floors.

Each was written by a helper who had never read the checkers' rules, and measured once: the first two sets before
any rule changed, the third pair after issue 45's first round of rules, with its errors left unread (the figures
in ``docs/tasks/drafting.md`` and ``docs/fidelity/simulator.md``); the fifth guard set and the fourth fidelity
set after negation came to be read by NegEx (issue 45), beside the code before it; the sixth guard set and the
fifth fidelity set after the shared reading's second round. Sets whose errors were read since are development
sets now (their names say so); their first measurements stay in the provenance. Editing a file would make its
figure one more development figure, so each file's digest is pinned here. The floors are those first
measurements: a later change may raise them, never lower them.
"""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources

from bedside.sim.validation import BUILTIN_SENTENCE_SETS, evaluate_checkers, read_fidelity_items
from bedside.tasks.drafting.guard import GuardSet, builtin_guard_sets, evaluate_guard, matcher_rates
from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher

DEFAULT = GuardedMatcher(EmbeddingMatcher())

FROZEN = {
    (
        "bedside.tasks.drafting",
        "guard_heldout_3.jsonl",
    ): "016d2dcdab1ea2c4872ba30d24140f78e055617d0ed04841f6b44bcb8f944d8d",
    ("bedside.sim", "fidelity_heldout_3.jsonl"): "66a70edf2d721733636302aff49074c34c6f9cb9043d81f0fc012efec006247a",
    (
        "bedside.tasks.drafting",
        "guard_heldout.jsonl",
    ): "0fff6c14056365b78fb192c84fca1f469af2849ea5b3e79cc434375ba6e8db76",
    ("bedside.sim", "fidelity_heldout_2.jsonl"): "e933c98e5cde99af083f795fec537b50d398ce1911cd95c61e6f1296acd2e1ed",
    (
        "bedside.tasks.drafting",
        "guard_heldout_4.jsonl",
    ): "4f8489a03c55fe79d77d191acef44ef01b38cd60c1abb08bf5b46409f1e4006d",
    (
        "bedside.tasks.drafting",
        "guard_heldout_5.jsonl",
    ): "4c5665e3e4438cd197b4b5c1c67f999b18fea723e9b95c630bcd1ebca985b911",
    ("bedside.sim", "fidelity_heldout_4.jsonl"): "5584f9c96ceb1a6ead13d2c06d87af0706f07b8fc78f0ab2ebebdcab438fc14b",
    (
        "bedside.tasks.drafting",
        "guard_heldout_6.jsonl",
    ): "e7e97990b6523a07f82527f2279c11f2cbe143d32ff9024815b1e819efa43530",
    ("bedside.sim", "fidelity_heldout_5.jsonl"): "913991c42223aa6451b1519880b2a8f8019d56bbea63bb183f204165b71092f5",
    (
        "bedside.tasks.drafting",
        "guard_heldout_7.jsonl",
    ): "03657944f59bda980cc259851dd85117086a4b9ebe6be37fd21e9c6e4e8a9f9c",
    ("bedside.sim", "fidelity_heldout_6.jsonl"): "5739ec65bdda040265b85a51ed607bef53707a6be3de22c6c3f2034701ee1676",
    (
        "bedside.tasks.drafting",
        "guard_heldout_8.jsonl",
    ): "85e62a0384f7216b7b20fde02f2ea8297678949f6161766c2ef3cd42e27cbf3a",
    ("bedside.sim", "fidelity_heldout_7.jsonl"): "61dc1c05a97b3bbff24670fd0ef57e891aa378498ddb063cac43f605a6363834",
    (
        "bedside.tasks.drafting",
        "guard_heldout_9.jsonl",
    ): "efc6fdcda66276beac7ee43f23d5507a835bdfe25094cb573bd0b1c7e0cb06d4",
    ("bedside.sim", "fidelity_heldout_8.jsonl"): "ab794abaa5fca1bb3fdde193bb406dd38243a81ea73fc07b6c59cae7582d2e3e",
    (
        "bedside.tasks.drafting",
        "guard_heldout_10.jsonl",
    ): "4a48f4e538d17e7a1acbe04b90a9a0d6676ebb920051991463095c0f7b7b9400",
    ("bedside.sim", "fidelity_heldout_9.jsonl"): "5abcc90f002dd3274afca02ed2a3baf0d162e2d3e2725551139d8c5a265df34a",
    (
        "bedside.tasks.drafting",
        "guard_heldout_11.jsonl",
    ): "dbe3727e36a085c06d7ca365f08c1b0b12c8002f30e1a35148c6f2f1b24096da",
    ("bedside.sim", "fidelity_heldout_10.jsonl"): "b0fbb4e058c367cb81f670d9234e7f243aa9968809b4888e2f5cb80e582f8150",
    (
        "bedside.tasks.drafting",
        "guard_heldout_12.jsonl",
    ): "943259c48a9fe627b829412362339c01d0052ed078670467f6ffc45b8e038c19",
    ("bedside.sim", "fidelity_heldout_11.jsonl"): "8897641db9b6a35cf5e1e14cb76aa31b1019253fc6d386113a49de39715f370c",
    (
        "bedside.tasks.drafting",
        "guard_heldout_13.jsonl",
    ): "fcfae3e4a2ef7b0a46e863c631923411db15f81c2ed69b2510ecb8d453b8f82c",
    ("bedside.sim", "fidelity_heldout_12.jsonl"): "8fd43f01b9f06e922b2add76f05e3dbd135cf70a721b1a9b851121df6fd72e9a",
    (
        "bedside.tasks.drafting",
        "guard_heldout_14.jsonl",
    ): "bf8c6f3db7f927b58ec4988ea2b4fc0918a05f13cc9130dc9f108c68ed652db9",
    ("bedside.sim", "fidelity_heldout_13.jsonl"): "f265b4be51ecb32f3378d88a2da67cca74774c73f80dad633d2d29184acd4b7c",
    (
        "bedside.tasks.drafting",
        "guard_heldout_15.jsonl",
    ): "0fe3c8bf296578054d273562fc06aa8681d9e3c25b243cb464c6b936ce951561",
    ("bedside.sim", "fidelity_heldout_14.jsonl"): "121660b6205ca40f86d962962c25c3cf5243ad2bd5440f6599636fc71fb5aa60",
    (
        "bedside.tasks.drafting",
        "guard_heldout_16.jsonl",
    ): "fe083a1e9928a3356ab8d6e1ca7ce3cfe694b7626d1a97f4219cf7f0357ae642",
    ("bedside.sim", "fidelity_heldout_15.jsonl"): "f16e36e07e6beae753241e00fc7588c2e55e8000e03cef52f1e41140a8c6ad73",
    (
        "bedside.tasks.drafting",
        "guard_heldout_17.jsonl",
    ): "a20d06bb7a2250b5e84d558fd4ffc6d85758fef7dbd2db940e00f2894b745f67",
    ("bedside.sim", "fidelity_heldout_16.jsonl"): "57699eec3c0410f3f96a26933731629fb97db804b4b730eccab433c44894283f",
    (
        "bedside.tasks.drafting",
        "guard_heldout_18.jsonl",
    ): "13917c197e9ca3e05b83bfc01fec11325f4b0ce39af6c05174c2610d3459f1bb",
    ("bedside.sim", "fidelity_heldout_17.jsonl"): "98be5aca5143be4c07762fa5289cb71316aa582047bc0f5e0eb7e24d5014d7b5",
    (
        "bedside.tasks.drafting",
        "guard_heldout_19.jsonl",
    ): "7c19c4890cd238b2b801a359674b827cb387900da554e667ef9ef01457134ad4",
    ("bedside.sim", "fidelity_heldout_18.jsonl"): "98017a89d40ed6328058c105c18d41f0d951933ae3efb5cac23064921f5b6efe",
    (
        "bedside.tasks.drafting",
        "guard_heldout_20.jsonl",
    ): "a570a8fd5ccfa42004596e6f59df873c08e6c245b2481bcb81aaf2745c45a246",
    ("bedside.sim", "fidelity_heldout_19.jsonl"): "427a94f4b83c154eb6c92211d27f1e1dd086cf31b9bee520e89d449c59dedce7",
    (
        "bedside.tasks.drafting",
        "guard_heldout_21.jsonl",
    ): "1f94642f2534566127ddfcdb2c6d829afacc41c296fa768f0b6e5905563cbe30",
    ("bedside.sim", "fidelity_heldout_20.jsonl"): "e37be8a6e3b09ec0bf330016143a2ef689fc3c1d4f63aaf3d38bac4e05b1db88",
    (
        "bedside.tasks.drafting",
        "guard_heldout_22.jsonl",
    ): "6a6b63c7f9c6bda9fe74cfd7fd39ffa0f412377819d6752e1b5584ffc44bbdf8",
    ("bedside.sim", "fidelity_heldout_21.jsonl"): "6cc2e13feeed78d3cd2c79b05a94524954cc7324010e5fb7c5c653865eacf8c6",
    (
        "bedside.tasks.drafting",
        "guard_heldout_23.jsonl",
    ): "aea65f910af154af8f09838e7a570c952a4d266ef8cc710c1587b729561e1e89",
    ("bedside.sim", "fidelity_heldout_22.jsonl"): "b3c03f34d0995421c6e57548d6f764b29c58436c7db026c0770a9482b577a57d",
    (
        "bedside.tasks.drafting",
        "guard_heldout_24.jsonl",
    ): "b930400493e26a41629bbe7fd730d1690ccfa61e5371187dad9211dcfb6bb849",
    ("bedside.sim", "fidelity_heldout_23.jsonl"): "737557fda1da077325a91f41efddbf667b3865f8a1e71a1d809ddd6d98f96dd7",
    (
        "bedside.tasks.drafting",
        "guard_heldout_25.jsonl",
    ): "b6ac18d86f41a8e55e0637dd24937f3dd5e7d5f5a9292a7162616db9bd62425e",
    ("bedside.sim", "fidelity_heldout_24.jsonl"): "734e590e8beb7764819699271fd6fcb59946983b79df3dd9596179f9a852c8df",
    (
        "bedside.tasks.drafting",
        "guard_heldout_26.jsonl",
    ): "1977c3ac5c28735c22d89101d567159146eb5135a84761b2b6350783ac2ba14d",
    ("bedside.sim", "fidelity_heldout_25.jsonl"): "bfc3f1cee86200ff5df7aa85c903e3267f9b7798a33f558bc256286dfeedb846",
    (
        "bedside.tasks.drafting",
        "guard_heldout_27.jsonl",
    ): "bbae1937ffc1f0ae4980398b7af6a83cfe9ae9bb8cacde6ea52af4b6351c7b57",
    ("bedside.sim", "fidelity_heldout_26.jsonl"): "3a9ef1c21fce157bcd0bf8e8b8eed3412e15f235904473dcc8a733b81de108f2",
    (
        "bedside.tasks.drafting",
        "guard_heldout_28.jsonl",
    ): "3d1ea65c5ef2dbbdaacbb3475117988fa2ec7e278f8575d9d9e9c8218f3ab7c1",
    ("bedside.sim", "fidelity_heldout_27.jsonl"): "958053c0f283bc49bac6893f4797a356acb4c30e5aca360b7936774e6c029b35",
    (
        "bedside.tasks.drafting",
        "guard_heldout_29.jsonl",
    ): "556731088beb8e444158c22ebc5eeebca7fe69dce957c2726b84ae00e2abcd00",
    (
        "bedside.tasks.drafting",
        "guard_heldout_30.jsonl",
    ): "da2d109a50b9a439167973a31513e4ecdc150563e2018e066dc80c8d9eac3e1a",
    ("bedside.sim", "fidelity_heldout_28.jsonl"): "df920bc2e0a13b1592c7804a1a57c0e56de2514c44008de9360826a948a9ee2c",
    ("bedside.sim", "fidelity_heldout_29.jsonl"): "626b3065c7d1551893190e6f0e1c81f190f5ff31976273282a2ab38e319fcb19",
    (
        "bedside.tasks.drafting",
        "guard_heldout_31.jsonl",
    ): "a4b5bf8993ae624edbfcba746414244a940723b6b194583df0457d169f5b30f5",
    (
        "bedside.tasks.drafting",
        "guard_heldout_32.jsonl",
    ): "6f145f07e7d27be30b93e6f4d60d8951301c1fc0b7446ee51396efd5ca2b8338",
    ("bedside.sim", "fidelity_heldout_30.jsonl"): "70923bbc26c5cc2e771bb50fe92a1a3cb1bbb1d6556a7e95e65cec09bfa62da1",
    ("bedside.sim", "fidelity_heldout_31.jsonl"): "85e94b08af15e9a76643e05fdd7791a9628c41ba27c4d572fe55bc57cf023471",
    (
        "bedside.tasks.drafting",
        "guard_heldout_33.jsonl",
    ): "010d1b1021d48bbdbb4907330d0b47986273d48a83b29f8018838b4244205965",
    (
        "bedside.tasks.drafting",
        "guard_heldout_34.jsonl",
    ): "ab21482793db9ff0ab053dd3df87127cf5c2cc2081f3a8558ed29f5bac85bbda",
    ("bedside.sim", "fidelity_heldout_32.jsonl"): "c24f1e3334f08fca3b07c71fe652123f0bb3655a91c13ce160f23a96d7600443",
    ("bedside.sim", "fidelity_heldout_33.jsonl"): "fa1562f5bf1666745c2c4e15aa61fa49d0221f0ca4189001389017c9fd9bae7c",
    (
        "bedside.tasks.drafting",
        "guard_heldout_35.jsonl",
    ): "3f95b33c3991cc8655353bd7d0845d61436f668381cc60e47e53103e327af034",
    (
        "bedside.tasks.drafting",
        "guard_heldout_36.jsonl",
    ): "66cad47d233480739ba11732003e47c303dcf8eafa77a2f306ff1c586a7cfec3",
    ("bedside.sim", "fidelity_heldout_34.jsonl"): "8c20d27713d7b0284dd3031f1a14db1ba0c504fb35fb3d3babd96b711220a39b",
    ("bedside.sim", "fidelity_heldout_35.jsonl"): "d8ce7319dad90de7d6b875644eb6df5a5fe07f63a05a85e4f565fe8f8306f324",
    (
        "bedside.tasks.drafting",
        "guard_heldout_37.jsonl",
    ): "514ef1f76741406c044979da54ac993718017e58f6d06dda9b80d20ff6ba72ba",
    (
        "bedside.tasks.drafting",
        "guard_heldout_38.jsonl",
    ): "e8fbb295e724a2ef2f9172f5227fc14917aa8ed10cf661845b5de5918fa84ca7",
    ("bedside.sim", "fidelity_heldout_36.jsonl"): "2391a74f601bf630846d6a20fabb55874d30277bacb1f2faad90c99bf706dbb1",
    ("bedside.sim", "fidelity_heldout_37.jsonl"): "e05a4b10ff3c5414eb9ee89949f2f99f37cdd5da98461b0497e8e9e75eff2cf4",
    (
        "bedside.tasks.drafting",
        "guard_heldout_39.jsonl",
    ): "9edadff0c234142e946d38d05110983a522af2a947314db55e86a824fb40b47d",
    (
        "bedside.tasks.drafting",
        "guard_heldout_40.jsonl",
    ): "605843cfc167e4254c18f6d4a84e2c80ec93ebc2efaf437083e2b9781b0e8f7d",
    ("bedside.sim", "fidelity_heldout_38.jsonl"): "2680f990066e2f18a17b2681ee7e3b553b2ac34c97d97e58eb52131f435c3ccb",
    ("bedside.sim", "fidelity_heldout_39.jsonl"): "8d52ed5cd8927916de543c85f79fe14fb95fd5687c956720418d8fb24c1c0426",
    (
        "bedside.tasks.drafting",
        "guard_heldout_41.jsonl",
    ): "1d1eaadf210db237f9b1091006cc1b85663b9cd8bab6204104ebb7e2d2214d3a",
    (
        "bedside.tasks.drafting",
        "guard_heldout_42.jsonl",
    ): "39037eb08d83622893a5a6692d68a91cdab4699d181065aaadb5f361b710d99d",
    ("bedside.sim", "fidelity_heldout_40.jsonl"): "ba7c400f6a8a507e1d55b732b548091b41c59dc82a05707512c54ef416bef990",
    ("bedside.sim", "fidelity_heldout_41.jsonl"): "4133b6f145c376b554e9e7e7897bf65cff6160951c6488433118039fa177aaca",
    (
        "bedside.tasks.drafting",
        "guard_heldout_43.jsonl",
    ): "d29cdcea25ab5cf9b5b6da95cab8faff03e5367c7789d7a464c6249d9849fc4b",
    (
        "bedside.tasks.drafting",
        "guard_heldout_44.jsonl",
    ): "ab03c31c8051db7a3872157670a4bff6385f319ecc4ebb6e1db3bc8083f895e3",
    ("bedside.sim", "fidelity_heldout_42.jsonl"): "a03d7172fe809a2294649410f6e13564d955d7d361f5ab174eae3e0a32289101",
    ("bedside.sim", "fidelity_heldout_43.jsonl"): "8d48dbe4834b7e0a26610668323d4807cfd203f7a5843eea4e252d136ad22f82",
    (
        "bedside.tasks.drafting",
        "guard_heldout_45.jsonl",
    ): "ef40483516ecd2beb822e38275d826f1b30eff1ac05d81aa8addf8feb5c700d4",
    (
        "bedside.tasks.drafting",
        "guard_heldout_46.jsonl",
    ): "1f34d2d1e1a3bc916aaebee22fbbb78b2b212d72e4fa0417bd4d649bfe83ff21",
    ("bedside.sim", "fidelity_heldout_44.jsonl"): "1d38af874b4c98c4c3265b498d3be9ddb4e88915c1765ed93c988461422faf21",
    ("bedside.sim", "fidelity_heldout_45.jsonl"): "8ca1ebfa1939900388360e7f3aeb0c27cd05e1a3d526d69ceaa76a4d868001d9",
    (
        "bedside.tasks.drafting",
        "guard_heldout_47.jsonl",
    ): "076d862a6e4ec7489a063fea474fa86bb196818d89a787f0891bb8037fce4d45",
    (
        "bedside.tasks.drafting",
        "guard_heldout_48.jsonl",
    ): "853d9aaabd80854e0914fb6391a1424c71e7af85eddaa665daae182569f5d877",
    ("bedside.sim", "fidelity_heldout_46.jsonl"): "b20579fcd97fc137e966b7f3054c0eb7ab01b5dd9026b9a987d2adc090c6b7a2",
    ("bedside.sim", "fidelity_heldout_47.jsonl"): "906068c4c58cdcac665d34df5f5122aeae2822db80ddbb2fa6cc07a6ef2adc03",
    (
        "bedside.tasks.drafting",
        "guard_heldout_49.jsonl",
    ): "89e2e8fc48f394541498301ba0cd6bb685704e0ecd8eeb203f0df3420550f48c",
    (
        "bedside.tasks.drafting",
        "guard_heldout_50.jsonl",
    ): "840485f9e768d2722a3948ba468d17d002ec766821c60a93a30aac803dbe4f2c",
    ("bedside.sim", "fidelity_heldout_48.jsonl"): "d9ca8403ff707f9bceac3fb3d90396e917697dccb4ab3e3d96a6a2cd16c32d12",
    ("bedside.sim", "fidelity_heldout_49.jsonl"): "d06b3742498dec0cbb5b3d4da899776c6fee1099816a6dc1c21cc466c2cb0828",
    (
        "bedside.tasks.drafting",
        "guard_heldout_51.jsonl",
    ): "138382eabff6b009c13c2023b6ee03df8b99d7aa98b795bc9df80a8c869b642d",
    (
        "bedside.tasks.drafting",
        "guard_heldout_52.jsonl",
    ): "05005ea577e2ff1aba019db4e87e11136b89eceb2e7f92688303de74199d7d79",
    ("bedside.sim", "fidelity_heldout_50.jsonl"): "38aa9a302d8a39e6c123403b40debace73d1bd697a5ceee9d93b0f871e7d5103",
    ("bedside.sim", "fidelity_heldout_51.jsonl"): "ef94bdb9a559d48c2e0ef909f2a0d2e6d98fa672155a7814ac323f0decfe11b8",
}
REFUSING = GuardedMatcher(EmbeddingMatcher(), uncertain="reject")


def _by_name() -> dict[str, GuardSet]:
    """The built-in guard sets by their short name ("dev 2", "held out 9"), as the floors below are keyed."""
    return {labelled.name.removeprefix("outside-written, "): labelled for labelled in builtin_guard_sets()}


def test_the_outside_sets_are_frozen_as_written() -> None:
    for (package, name), digest in FROZEN.items():
        data = (resources.files(package) / "data" / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, f"{name} changed: write a new outside set instead"


def test_the_guard_does_not_fall_below_its_outside_measurements() -> None:
    sets = _by_name()
    # (rejected of 60, kept of 40, reversed matched of 60, paraphrases matched of 40): first measured, then floors
    floors = (
        # raised as the rules improved; first measurements in brackets. The round of kin, prefixes and the
        # negation's alignment (2026-11-30) read dev 9 and dev 10's errors and raised most floors: measured then
        # on the unread sets, reversed pairs matched fell by 12 and paraphrases kept rose by 21 over held out 6-16.
        # The round of a no's reach, rates and permissions (2026-11-30) read dev 11 and dev 12's: over held out
        # 8-20, rejections 577 -> 578 of 780, paraphrases kept 417 -> 435 of 520, reversed pairs matched 203 -> 202.
        # Its second round (choices, passives, findings) read dev 13 and dev 14's: over held out 10-20, rejections
        # 483 -> 491 of 660, paraphrases kept 368 -> 370 of 440, reversed pairs matched 177 -> 169. The round of
        # who acts, what is kept and what is avoided read dev 15 and dev 16's: over held out 12-24, rejections
        # 571 -> 581 of 780, paraphrases kept 416 -> 419 of 520, reversed pairs matched 209 -> 199. The round of
        # sides, counts and reach read dev 25 and dev 26's: over held out 22-34, rejections 639 -> 643 of 780,
        # paraphrases kept 423 -> 422 of 520, reversed pairs matched 141 -> 137. The round of signs, sites and
        # routes read dev 27 and dev 28's: over held out 24-36, rejections 647 -> 651 of 780, paraphrases kept
        # 430 -> 432 of 520, reversed pairs matched 133 -> 129. The round of lifted restrictions, asked rates and
        # held things read dev 29 and dev 30's: over held out 26-40, rejections 739 -> 744 of 900, paraphrases kept
        # 499 -> 501 of 600, reversed pairs matched 160 -> 155. The round of shares, kinds and parts of the day read
        # dev 31 and dev 32's: over held out 28-44, rejections 811 -> 812 of 1020, paraphrases kept 569 -> 570 of
        # 680, reversed pairs matched 207 -> 206. The round of floors, histories and facts found elsewhere read dev
        # 33 and dev 34's: over held out 30-46, rejections 791 -> 793 of 1020, paraphrases kept 567 -> 566 of 680,
        # reversed pairs matched 227 -> 225. The round of bounds, homes and sessions read dev 35 and dev 36's: over
        # held out 32-46, rejections 689 -> 690 of 900, paraphrases kept 501 -> 502 of 600, reversed pairs matched
        # 209 -> 208. The round of ranges, ages and parts of the day read dev 37 and dev 38's: over held out 34-46,
        # rejections 588 -> 588 of 780, paraphrases kept 428 -> 426 of 520, reversed pairs matched 190 -> 190. The
        # round of routes, opposed steps and counted spans read dev 39 and dev 40's: over held out 36-46, rejections
        # 497 -> 505 of 660, paraphrases kept 357 -> 358 of 440, reversed pairs matched 161 -> 153
        ("dev", (60, 38, 0, 35)),  # first 50, 34, 10, 31
        ("dev 2", (58, 38, 2, 31)),  # first 34, 28, 26, 22
        ("dev 3", (60, 40, 0, 40)),  # first 42, 35, 18, 35
        ("dev 4", (58, 36, 2, 30)),  # first 40, 26, 20, 22
        ("dev 5", (59, 34, 1, 34)),  # first 47, 25, 13, 25 (unread then); its errors read in the fourth round
        ("dev 6", (52, 34, 8, 34)),  # first 35, 22, 25, 22 (unread then); its errors read in the fifth round
        ("dev 7", (56, 38, 4, 38)),  # first 36, 32, 23, 32 (unread then); read in the fifth round
        ("dev 8", (55, 37, 5, 37)),  # first 49, 37, 11, 37 (fa1419f; its four errors printed then); synonym round
        ("dev 9", (50, 36, 10, 35)),  # first 37, 35, 23, 34; 44, 35, 16, 34 at ee73d86, unread until then
        ("dev 10", (49, 36, 11, 34)),  # first 42, 32, 18, 30; 49, 33, 11, 31 at ee73d86, unread until then
        # first 43, 31, 17, 31; 49, 35, 11, 35 at 1e34877, unread until then; a test that came back negative read as
        # showing none of its finding (the round of answers and results) cost it a paraphrase: the "no" it puts
        # there reaches over a comma to the next clause's subject
        ("dev 11", (53, 38, 7, 38)),
        ("dev 12", (57, 33, 3, 33)),  # first 47, 27, 12, 27; 54, 28, 6, 28 at 1e34877, unread until then
        # first 43, 26, 16, 26; 48, 30, 12, 30 at 1e34877 and 47, 32, 13, 32 at df9335e (the round of a no's reach
        # traded a rejection for two paraphrases), unread until then
        ("dev 13", (51, 35, 9, 35)),
        # "each night" read as once a day (2026-11-30, the round of unrelated words) made one paraphrase a conflict:
        # its "start tonight" is bound to the inhaler's other step; three paraphrases elsewhere agree for it
        # first 43, 32, 17, 32; 48, 35, 12, 35 at df9335e, unread until then; +6 rejections since, one in the round of
        # routes, opposed steps and counted spans
        ("dev 14", (56, 37, 4, 37)),
        # unread: first measurement, then the floor after the round of 2026-11-30 (at ee73d86 in brackets)
        # first 45, 28, 15, 27 (47, 28, 13, 27 at ee73d86); 50, 34, 10, 33 at 561eb61, unread until then
        ("dev 15", (54, 38, 6, 37)),
        # first 43, 26, 17, 26 (44, 27, 16, 27 at ee73d86); 46, 35, 14, 35 at 561eb61, unread until then
        ("dev 16", (54, 37, 6, 37)),
        # first 38, 32, 22, 31 (44, 32, 16, 31); 44, 35, 16, 34 at 5f4f2d0, unread until then (held out 12)
        ("dev 17", (47, 35, 13, 34)),
        ("dev 18", (49, 36, 11, 35)),  # first 35, 33, 25, 32 (e340556); 40, 36, 20, 35 at 5f4f2d0 (held out 13)
        # its writer was told the kinds the rules read and asked for subtler changes: the rules' floor on text
        # written against them; first 19, 33, 41, 33 (0ca9e27); 23, 33, 37, 33 at 80fe826, unread until then
        ("dev 19", (24, 36, 36, 36)),
        # sealed through the synonym round (46, 34, 14, 34 before it); 50, 37, 10, 37 at 80fe826, unread until then
        ("dev 20", (52, 38, 8, 38)),
        # first 46, 32, 14, 32 (the synonym round's rules); 50, 34, 10, 34 at 38bee85 (held out 16, unread until then)
        ("dev 21", (53, 35, 7, 35)),
        # first 49, 31, 11, 30 (ee73d86); 51, 36, 9, 35 at 38bee85 (held out 17, unread until then)
        ("dev 22", (52, 38, 8, 37)),
        # first 47, 27, 13, 25 (889e3b8); 51, 30, 9, 28 at 5bca2e6 (held out 18, unread until then)
        ("dev 23", (53, 37, 7, 35)),
        # first 50, 29, 10, 29 (1e34877); 51, 34, 9, 34 at 5bca2e6 (held out 19, unread until then)
        ("dev 24", (52, 38, 8, 38)),
        # first 46, 29, 14, 29 (1e34877); 49, 31, 11, 31 at 74afd4b (held out 20, unread until then)
        ("dev 25", (56, 38, 4, 38)),
        # first 39, 32, 21, 32 (df9335e); the same at 74afd4b (held out 21, unread until then): what a sentence
        # chooses over another (the second round of 2026-11-30) cost it a paraphrase for a rejection, and "avoid X"
        # and "do not VERB X" read as one "no" (the round of clauses, counts and kin) a rejection
        ("dev 26", (47, 38, 13, 38)),
        # first 39, 24, 21, 24 (df9335e); 41, 28, 19, 28 at 3668f43 (held out 22, unread until then)
        ("dev 27", (49, 32, 11, 32)),  # +2 rejections (routes, opposed steps and counted spans)
        # first 45, 28, 15, 28 (561eb61); 47, 30, 13, 30 at 3668f43 (held out 23, unread until then); a verb in a
        # "when I ..." clause read as background (the round of who acts, what is kept and what is avoided) cost it
        # a paraphrase, and gained held out 22 (dev 27) a rejection and a paraphrase, found by totals with each
        # change taken back
        ("dev 28", (50, 33, 10, 33)),  # +1 rejection (routes, opposed steps and counted spans)
        # first 52, 32, 8, 32 (561eb61); 51, 32, 9, 32 at ecdcb4c (held out 24, unread until then)
        ("dev 29", (56, 35, 4, 35)),
        # first 36, 28, 24, 28 (5f4f2d0); 38, 30, 22, 30 at ecdcb4c (held out 25, unread until then)
        ("dev 30", (43, 34, 17, 34)),
        # first 49, 36, 11, 36 (5f4f2d0); 52, 35, 8, 35 at f086308 (held out 26, unread until then); "every month"
        # read as once a month (the round of sides, counts and reach) cost it a paraphrase, and held out 31 one,
        # found by totals with the reading taken back; over the seventeen unread fidelity sets the reading caught 4
        # contradictions more
        ("dev 31", (52, 37, 8, 37)),
        # first 55, 34, 5, 34 (80fe826); 56, 36, 4, 36 at f086308 (held out 27, unread until then)
        ("dev 32", (58, 37, 2, 37)),
        # first 57, 28, 3, 28 (80fe826); 58, 27, 2, 27 at a065328 (held out 28, unread until then): "off limits"
        # read as a "no" (the round of lifted restrictions, asked rates and held things) had cost it a paraphrase
        ("dev 33", (58, 29, 2, 29)),
        # first 50, 33, 10, 33 (38bee85); 51, 34, 9, 34 at a065328 (held out 29, unread until then)
        ("dev 34", (54, 37, 6, 37)),
        # first 53, 30, 7, 30 (38bee85); 53, 32, 7, 32 at 46cf53f (held out 30, unread until then)
        ("dev 35", (55, 36, 5, 36)),
        # first 50, 32, 10, 32 (5bca2e6); 51, 33, 9, 33 at 46cf53f (held out 31, unread until then)
        ("dev 36", (52, 36, 8, 36)),
        # first 47, 35, 13, 31 (5bca2e6); 47, 36, 13, 32 at 011bc7f (held out 32, unread until then)
        ("dev 37", (49, 37, 11, 33)),
        # first 53, 37, 7, 37 (74afd4b); 55, 38, 5, 38 at 011bc7f (held out 33, unread until then)
        ("dev 38", (57, 39, 3, 39)),
        # first 48, 32, 12, 32 (74afd4b); 48, 32, 12, 32 at 4c04c9a (held out 34, unread until then)
        ("dev 39", (52, 34, 8, 34)),
        # first 41, 35, 19, 33 (3668f43); 43, 37, 17, 34 at 4c04c9a (held out 35, unread until then)
        ("dev 40", (47, 37, 13, 34)),
        # first 51, 31, 9, 31 (3668f43), unread; the round of ranges, ages and parts of the day cost it a rejection
        # (measured once, not looked into)
        ("held out 36", (51, 31, 9, 31)),
        # first 45, 31, 15, 31 (438dc1c), unread; "three doses a day" read as a rate (the same round) cost it a
        # rejection and a reversed pair matched, found by totals with the reading taken back
        ("held out 37", (44, 32, 16, 32)),
        ("held out 38", (45, 33, 15, 33)),  # first 42, 33, 18, 33 (438dc1c), unread; +2 (routes, opposed steps)
        # first 49, 29, 10, 29 (ecdcb4c), unread; +1 paraphrase in the round of shares, kinds and parts of the day
        ("held out 39", (50, 31, 9, 31)),
        ("held out 40", (42, 36, 18, 34)),  # first 41, 36, 19, 34 (ecdcb4c), unread
        # first 45, 38, 15, 37 (b376ea5), unread; the round of floors, histories and facts found elsewhere cost it
        # two paraphrases, a trade measured once over the seventeen unread sets (above) and not looked into
        ("held out 41", (45, 35, 15, 34)),  # -1 paraphrase more in the round of ranges, ages and parts of the day
        ("held out 42", (37, 32, 23, 31)),  # first 37, 32, 23, 31 (b376ea5), unread
        ("held out 43", (51, 33, 9, 33)),  # first 50, 33, 10, 33 (f086308), unread; +1 rejection (the same round)
        ("held out 44", (46, 36, 13, 35)),  # first 43, 36, 16, 35 (f086308), unread; +3 (routes, opposed steps)
        ("held out 45", (47, 31, 13, 30)),  # first 46, 31, 14, 30 (a065328), unread; +1 (routes, opposed steps)
        # first 42, 27, 18, 25 (a065328), unread; -1 paraphrase (ranges, ages), +2 rejections and the paraphrase
        # back (routes, opposed steps and counted spans)
        ("held out 46", (45, 27, 15, 25)),
    )
    assert {name for name, _ in floors} == set(sets) - {"bedside's own"}  # every outside set has its floors
    for name, (rejected, kept, reversed_matched, matched) in floors:
        labelled = sets[name]
        # counts only, never the pairs: a failing assertion prints what it compares, and a held-out set's pairs
        # must not reach a log (once they did, through the GuardEvaluation's repr)
        size = (len(labelled.pairs), sum(not p.match for p in labelled.pairs))
        assert size == (100, 60), labelled.name
        guard = evaluate_guard(labelled.pairs).total
        found_rejected, found_kept = int(guard.rejected), int(guard.kept)
        assert found_rejected >= rejected, labelled.name
        assert found_kept >= kept, labelled.name
        rates = matcher_rates(labelled.pairs, DEFAULT)
        found_reversed, found_matched = int(rates.reversed_matched), int(rates.paraphrases_matched)
        assert found_reversed <= reversed_matched, labelled.name  # each a reversal counted as kept content
        assert found_matched >= matched, labelled.name
    own = sets["bedside's own"]
    assert matcher_rates(own.pairs, DEFAULT).reversed_matched == 0  # the earlier reversed pairs stay unmatched


def test_what_the_guard_calls_uncertain_does_not_fall_below_its_outside_measurements() -> None:
    """Measured once when the guard learned to say uncertain: set 3 and 4 with their errors unread."""
    sets = _by_name()
    # (reversed pairs passed silently of 60, reversed matched / paraphrases matched of 60 / 40 with
    # uncertain=reject)
    floors = (
        # alternate days read as every 2 days (2026-11-30) left one paraphrase a small change with words the rules
        # cannot compare ("change the" / "put a fresh"): uncertain, so refused by --uncertain reject
        ("dev", (0, 0, 31)),  # first 2, 2, 28
        ("dev 2", (1, 1, 24)),  # first 12, 12, 21
        ("dev 3", (0, 0, 24)),  # first 4, 4, 16
        ("dev 4", (1, 1, 26)),  # first 4, 4, 20
        ("dev 5", (1, 1, 28)),  # first 8, 8, 23
        ("dev 6", (4, 4, 28)),  # first 10, 10, 21 (unread then); one paraphrase lost to Snowball's stems
        ("dev 7", (1, 1, 30)),  # first 9, 8, 27 (unread then)
        # one paraphrase fewer kept by --uncertain reject since the second round of 2026-11-30 (a preference read)
        ("dev 8", (1, 1, 22)),  # first 1, 1, 17 (the rules of fa1419f); 23 after the synonym round
        ("dev 9", (5, 5, 30)),  # first 8, 8, 29
        ("dev 10", (7, 7, 24)),  # first 9, 9, 21
        ("dev 11", (4, 4, 34)),  # first 7, 7, 30 (unread then); one paraphrase fewer (see above)
        ("dev 12", (1, 1, 29)),  # first 4, 3, 27 (unread then)
        ("dev 13", (6, 6, 30)),  # first 12, 11, 23 (unread then)
        ("dev 14", (2, 2, 35)),  # first 9, 9, 31 (unread then); one paraphrase fewer since "each night" (see above)
        ("dev 15", (3, 3, 30)),  # first 7, 7, 26 (unread then)
        ("dev 16", (4, 4, 32)),  # first 9, 9, 26 (unread then)
        ("dev 17", (5, 5, 31)),  # first 5, 5, 29 (held out 12, unread until 2026-11-30)
        ("dev 18", (3, 3, 31)),  # first 4, 4, 26 (held out 13, unread until 2026-11-30)
        ("dev 19", (26, 26, 26)),  # first 27, 27, 22; 27, 27, 25 at 80fe826 (held out 14, unread until then)
        # 18 paraphrases before the synonym round, 22 after; 4, 4, 24 at 80fe826 (held out 15); one paraphrase fewer
        # kept by --uncertain reject since "keep doing" reads as continue ("every day holding" / "and hold")
        ("dev 20", (2, 2, 24)),
        ("dev 21", (3, 3, 27)),  # 5, 5, 26 at 38bee85 (held out 16, unread until then)
        ("dev 22", (5, 5, 33)),  # 5, 5, 31 at 38bee85 (held out 17, unread until then); 6, 6, 30 at ee73d86
        ("dev 23", (5, 5, 33)),  # first 8, 8, 22 (889e3b8); 7, 7, 25 at 5bca2e6 (held out 18, unread until then)
        ("dev 24", (5, 5, 37)),  # first 7, 7, 27 (1e34877); 6, 6, 32 at 5bca2e6 (held out 19, unread until then)
        ("dev 25", (4, 4, 35)),  # first 10, 10, 27 (1e34877); 9, 9, 28 at 74afd4b (held out 20, unread until then)
        ("dev 26", (10, 10, 35)),  # first 15, 15, 29 (df9335e); the same at 74afd4b (held out 21)
        ("dev 27", (10, 10, 32)),  # first 19, 19, 24 (df9335e); 17, 17, 28 at 3668f43 (held out 22)
        ("dev 28", (5, 5, 33)),  # first 10, 10, 28 (561eb61); 8, 8, 30 at 3668f43 (held out 23)
        ("dev 29", (2, 2, 33)),  # first 5, 5, 30 (561eb61); 6, 6, 30 at ecdcb4c (held out 24)
        ("dev 30", (12, 12, 34)),  # first 18, 18, 27 (5f4f2d0); 17, 17, 30 at ecdcb4c (held out 25)
        ("dev 31", (5, 5, 37)),  # first 7, 7, 36 (5f4f2d0); 5, 5, 35 at f086308 (held out 26)
        ("dev 32", (1, 1, 32)),  # first 3, 3, 29 (80fe826); 3, 3, 31 at f086308 (held out 27)
        ("dev 33", (0, 0, 25)),  # first 1, 1, 25 (80fe826); 0, 0, 24 at a065328 (held out 28)
        ("dev 34", (2, 2, 33)),  # first 4, 4, 27 (38bee85); 3, 3, 30 at a065328 (held out 29)
        ("dev 35", (1, 1, 33)),  # first 2, 2, 26 (38bee85); 2, 2, 29 at 46cf53f (held out 30)
        ("dev 36", (8, 8, 33)),  # first 9, 9, 29 (5bca2e6); 8, 8, 30 at 46cf53f (held out 31)
        ("dev 37", (6, 6, 31)),  # first 6, 6, 28 (5bca2e6); 6, 6, 30 at 011bc7f (held out 32)
        ("dev 38", (2, 2, 35)),  # first 4, 4, 33 (74afd4b); 3, 3, 34 at 011bc7f (held out 33)
        ("dev 39", (7, 7, 30)),  # first 11, 11, 28 (74afd4b); 11, 11, 28 at 4c04c9a (held out 34)
        ("dev 40", (12, 12, 30)),  # first 17, 17, 29 (3668f43); 16, 16, 30 at 4c04c9a (held out 35)
        ("held out 36", (6, 6, 27)),  # first 6, 6, 27 (3668f43), unread; +1 passed (ranges, ages, parts of the day)
        ("held out 37", (13, 13, 30)),  # first 12, 12, 29 (438dc1c), unread; +1 ("three doses a day", above)
        ("held out 38", (14, 14, 29)),  # first 17, 17, 29 (438dc1c), unread; -3 (routes, opposed steps)
        ("held out 39", (10, 9, 26)),  # first 11, 10, 24 (ecdcb4c), unread; +1 (shares, kinds and parts of the day)
        ("held out 40", (15, 15, 32)),  # first 16, 16, 32 (ecdcb4c), unread
        ("held out 41", (15, 15, 32)),  # first 15, 15, 34 (b376ea5), unread; -1 paraphrase twice (floors; ranges)
        ("held out 42", (23, 23, 31)),  # first 23, 23, 31 (b376ea5), unread
        ("held out 43", (6, 6, 21)),  # first 7, 7, 21 (f086308), unread; -1 reversal (the same round)
        ("held out 44", (11, 10, 25)),  # first 12, 11, 25 (f086308), unread; -1 (routes, opposed steps)
        ("held out 45", (12, 12, 26)),  # first 13, 13, 26 (a065328), unread; -1 (routes, opposed steps)
        ("held out 46", (10, 10, 22)),  # first 12, 12, 22 (a065328), unread; ranges -1 paraphrase; routes +2, +1
    )
    assert {name for name, _ in floors} == set(sets) - {"bedside's own"}
    for name, (silent, reversed_matched, matched) in floors:
        labelled = sets[name]
        found_silent = int(evaluate_guard(labelled.pairs).total.passed_silently)  # counts only (see above)
        assert found_silent <= silent, labelled.name
        rates = matcher_rates(labelled.pairs, REFUSING)
        found_reversed, found_matched = int(rates.reversed_matched), int(rates.paraphrases_matched)
        assert found_reversed <= reversed_matched, labelled.name
        assert found_matched >= matched, labelled.name


def test_the_fidelity_checker_does_not_fall_below_its_outside_measurements() -> None:
    # contradicted (hits, false), unsupported (hits, false), each set's first measurement in its comment. Set to
    # the figures after the fidelity round of 2026-11-30 (another relative with the same history, a dose not heard
    # in a count of something else, a "no" an action took in, "nobody", rates as patients say them), which read
    # 29c's and 29d's errors; measured then on the fifteen unread sets: contradictions caught 495 -> 532 of 825,
    # false ones 198 -> 195, unsupported right 520 -> 518 (29f and 29n lost one each; 28, 29f, 29m and 29n gained
    # a false contradiction or two while catching more elsewhere): floors may fall only with such a measured trade.
    # The round of who acts, what is kept and what is avoided (2026-11-30) read 29h's and 29i's; over the
    # seventeen unread sets (29j to 30k): contradictions caught 599 -> 629 of 935, false ones 241 -> 207,
    # unsupported right 574 -> 598, false 295 -> 271. The round of sides, counts and reach read 30c's and 30t's;
    # over the seventeen unread sets (30d to 30s, 30u): contradictions caught 632 -> 641, false ones 212 -> 212,
    # unsupported right 516 -> 516, false 227 -> 225. The round of lifted restrictions, asked rates and held things
    # read 30f's and 30g's; over the nineteen unread sets (30h to 30s, 30u to 30z, 12-01): contradictions caught
    # 731 -> 732 of 1045, false ones 237 -> 231, unsupported right 555 -> 556, false 213 -> 212. The round of shares,
    # kinds and parts of the day read 30h's and 30i's; over the twenty unread sets (30j to 30s, 30u to 30y, 12-01
    # to 12-01e): contradictions caught 773 -> 773 of 1100, false ones 246 -> 244, unsupported right 592 -> 593,
    # false 238 -> 238. The round of floors, histories and facts found elsewhere read 30j's and 30k's; over the
    # twenty unread sets (30l to 30s, 30u to 30y, 12-01 to 12-01g): contradictions caught 777 -> 779 of 1100, false
    # ones 257 -> 257, unsupported right 575 -> 575, false 239 -> 235; it cost 30o, 30r, 30v, 30x and 12-01c a false
    # contradiction each and 12-01 and 12-01d a contradiction each, a trade measured once and not looked into. The
    # round of bounds, homes and sessions read 30l's and 30m's; over the eighteen unread sets (30n to 30s, 30u to
    # 30y, 12-01 to 12-01g): contradictions caught 700 -> 706 of 990, false ones 246 -> 245, unsupported right
    # 503 -> 504, false 205 -> 204; it cost 30r, 30x and 30y a false contradiction each, 30s a contradiction and
    # 30n a false unsupported sentence. The round of routes, opposed steps and counted spans read 30p's and 30q's;
    # over the fourteen unread sets (30r, 30s, 30u to 30y, 12-01 to 12-01g): contradictions caught 553 -> 553 of
    # 770, false ones 184 -> 184, unsupported right 390 -> 390 of 630, false 151 -> 150
    floors = {
        "outside-written 2026-11-28": ((43, 11), (31, 12)),  # first (38, 13), (28, 25)
        "outside-written 2026-11-28b": ((45, 16), (30, 11)),  # first (36, 20), (27, 33)
        # first (26, 14), (28, 36); the round of 2026-11-30 (sides, weight, spoken numbers) traded an unsupported
        # sentence for two false contradictions fewer; the round of ranges, ages and parts of the day turned a false
        # contradiction into a false unsupported sentence
        "outside-written 2026-11-29": ((43, 11), (34, 11)),
        "outside-written 2026-11-29b": ((46, 12), (28, 7)),  # first (40, 16), (28, 9); read in the fifth round
        # first (35, 20); read 2026-11-30. A duration said of no subject the fact shares, asked for a near fact
        # (the round of who acts, what is kept and what is avoided), lost it a contradiction (now a false
        # unsupported) and turned four false contradictions into unsupported ones
        "outside-written 2026-11-29c": ((40, 9), (33, 14)),
        "outside-written 2026-11-29d": ((38, 10), (33, 13)),  # first (35, 15), (32, 12); read 2026-11-30
        # first (30, 12), (33, 12) (fourth round); a "no" read with the question's subject (the same round) caught
        # two more contradictions here and made an unsupported sentence a false contradiction
        # a short answer giving back a stated amount read as entailed (the round of answers and results) took an
        # unsupported sentence here ("three or four times a night" of a new habit)
        "outside-written 2026-11-29e": ((36, 9), (31, 11)),
        "outside-written 2026-11-29f": ((32, 8), (33, 13)),  # first (29, 11), (34, 16) (fifth round)
        # a development set since the second round of 2026-11-30, which traded a false unsupported for two false
        # contradictions fewer
        "outside-written 2026-11-29g": ((36, 5), (32, 21)),  # first (30, 8), (31, 23) (fifth round)
        "outside-written 2026-11-29h": ((47, 3), (40, 15)),  # first (35, 12), (35, 23) (834b7b0)
        # first (33, 9), (37, 17) (d18a18b); the round of ranges, ages and parts of the day: two false
        # contradictions fewer, two false unsupported more, and a contradiction lost ("like normal" is no absence)
        "outside-written 2026-11-29i": ((45, 6), (38, 11)),
        "outside-written 2026-11-29j": ((44, 10), (35, 15)),  # first (37, 15), (33, 16) (cfcf7cd)
        # first (44, 15), (32, 14) (4193931); a bare age ("I am 26 and ...") no longer a number to meet (the round of
        # answers and results) cost it the contradiction that number carried ("my fifth one" against a third)
        "outside-written 2026-11-29k": ((46, 10), (33, 11)),
        "outside-written 2026-11-29l": ((42, 12), (34, 11)),  # first (36, 19), (34, 16) (6ea5ee4)
        # "a couple of pills a week" read as a count (2026-11-30) turned a false contradiction into a false
        # unsupported, found by totals with each change taken back
        # a cap against the same number said plainly (the round of scores, ranges and days) turned a false
        # contradiction here ("up to 39.5" / "the highest was thirty-nine and a half") into a false unsupported
        "outside-written 2026-11-29m": ((34, 6), (42, 17)),  # first (29, 9), (42, 20) (182aa8e)
        # first (33, 9), (39, 21) (e340556); (34, 8), (38, 18) at 38bee85, unread until then; the same cap reading
        # turned false contradictions here into false unsupported ones
        "outside-written 2026-11-29n": ((34, 3), (38, 20)),
        # first (32, 23), (35, 25) (0ca9e27); "twice weekly" read as a rate (2026-11-30) turned a false contradiction
        # into a false unsupported, found by totals with each change taken back
        # the round of who acts, what is kept and what is avoided asked a number or a span said of no subject the
        # fact shares for a near fact (CombinedThresholds.measure_unshared): here it traded a contradiction and
        # three false unsupported for six false contradictions fewer and four unsupported more
        "outside-written 2026-11-29o": ((36, 14), (39, 23)),
        # an age read as no span of time (2026-11-30, the round of unrelated words) turned a contradiction here into a
        # false unsupported; over the seventeen unread sets it caught one fewer and made one false contradiction fewer
        # first (33, 18), (32, 15) (fa1419f); (40, 12), (36, 11) at 5bca2e6, unread until then
        # the round of signs, sites and routes turned a false contradiction here into a false unsupported
        "outside-written 2026-11-30": ((43, 7), (36, 7)),
        # "every morning" read as once a day (the same round) made an unsupported sentence here a false contradiction
        # and cost an unsupported one; over the seventeen unread sets it caught 5 more contradictions for it
        # first (34, 13), (34, 19) (synonym round); (40, 10), (34, 14) at 5bca2e6, unread until then
        # the round of ranges, ages and parts of the day lost a contradiction here: "when she was about sixty" is an
        # age at an event now, which no longer meets a fact's bare "at 80"
        "outside-written 2026-11-30b": ((42, 9), (34, 6)),
        # first (24, 15), (33, 19) (synonym round); (33, 10), (34, 12) at 74afd4b, unread until then
        "outside-written 2026-11-30c": ((37, 7), (34, 11)),
        # who the patient lives with (sim/household.py) cost it a contradiction and two false unsupported for a
        # false contradiction fewer, and 2026-11-30e a false contradiction; over the seventeen unread sets it
        # caught 15 more for those, found by totals with the reading taken back
        # first (35, 11), (35, 22) (ee73d86); (38, 7), (37, 20) at 3668f43, unread until then
        "outside-written 2026-11-30d": ((44, 5), (37, 15)),
        # first (36, 10), (38, 18) (889e3b8); (40, 10), (38, 12) at 3668f43, unread until then
        "outside-written 2026-11-30e": ((45, 7), (38, 10)),
        # first (38, 24), (27, 14) (1e34877); "metformin for my diabetes" kept to its words (the round of signs,
        # sites and routes: "taking metformin" read as a state ended the search before two doses were compared)
        # cost it a contradiction, found by totals with the wider reading taken back; (41, 19), (29, 11) at ecdcb4c,
        # unread until then
        # the round of ranges, ages and parts of the day: two false contradictions fewer, one false unsupported more
        "outside-written 2026-11-30f": ((43, 14), (31, 11)),
        # first (28, 16), (36, 28) (1e34877); (33, 13), (38, 22) at ecdcb4c, unread until then
        "outside-written 2026-11-30g": ((40, 8), (40, 19)),
        # first (35, 15), (31, 12) (df9335e); (36, 15), (31, 10) at f086308, unread until then
        "outside-written 2026-11-30h": ((37, 11), (33, 10)),
        # weekdays said in the plural, as a run or as a part of the week (the round of scores, ranges and days) made
        # two false contradictions here and cost an unsupported sentence; over the seventeen unread sets those were
        # its whole cost, found by totals with the reading taken back
        # an action compared only with a fact it shares a subject with (the round of lifted restrictions, asked
        # rates and held things) cost it a contradiction, found by totals with the change taken back; over the
        # nineteen unread sets it made five false contradictions fewer. First (32, 15), (25, 13) (df9335e); (34, 16),
        # (26, 12) at f086308, unread until then; the round that read it (shares, kinds and parts of the day) made
        # five false contradictions fewer here and one false unsupported more
        # the round of bounds, homes and sessions turned a false contradiction here into a false unsupported sentence
        "outside-written 2026-11-30i": ((35, 11), (26, 14)),
        # first (36, 15), (31, 14) (561eb61); (40, 7), (37, 7) at a065328, unread until then
        "outside-written 2026-11-30j": ((43, 3), (38, 8)),
        # a short answer that gives back an amount the facts state, read as entailed (the round of answers and
        # results), turned an unsupported sentence here entailed; over the seventeen unread sets it made 15 false
        # unsupported fewer for that one, found by totals with the reading taken back
        # first (34, 9), (38, 18) (561eb61); (36, 5), (40, 14) at a065328, unread until then
        "outside-written 2026-11-30k": ((44, 1), (41, 13)),
        # a cap against the same number said plainly read as no conflict (the same round) turned a false
        # contradiction here into a false unsupported sentence, found by totals with the reading taken back
        # first (38, 6), (38, 13) (5f4f2d0); (39, 4), (38, 11) at 46cf53f, unread until then
        "outside-written 2026-11-30l": ((44, 2), (39, 11)),
        # first (38, 8), (34, 23) (5f4f2d0); (40, 7), (34, 19) at 46cf53f, unread until then
        "outside-written 2026-11-30m": ((43, 3), (34, 19)),
        # first (39, 21), (27, 23) (80fe826); a time of the day compared only with another (the round of shares,
        # kinds and parts of the day: "in the morning" is no day) cost it a contradiction, found by totals with the
        # reading taken back; over the twenty unread sets it made two false contradictions fewer (30j, 30v) for it
        # the round of bounds, homes and sessions: three false contradictions fewer, one false unsupported more;
        # read in the round of ranges, ages and parts of the day: (42, 11), (30, 16)
        "outside-written 2026-11-30n": ((42, 11), (30, 16)),
        # a verb in -ing read as its stem too ("driving" meets "driven", the same round) made an unsupported
        # sentence here a false contradiction, and in 30p and 12-01 one each; over the nineteen unread sets it
        # caught one contradiction for those three, found by totals with the reading taken back
        # first (43, 13), (39, 7) (80fe826); read in the round of ranges, ages and parts of the day: (47, 4), (39, 6)
        "outside-written 2026-11-30o": ((47, 4), (39, 6)),
        # first (28, 15), (32, 21) (38bee85); the round of ranges, ages and parts of the day cost it an unsupported
        # sentence, measured once and not looked into (30s, 30y, 30z and 12-01 a false unsupported sentence or
        # contradiction more each, too); read in the round of routes, opposed steps and counted spans: (31, 11),
        # (30, 17)
        "outside-written 2026-11-30p": ((31, 11), (30, 17)),
        # a dosage form read as no drug (the round of clauses, counts and kin: "eye drops", "nasal spray") turned an
        # unsupported sentence here entailed; over the seventeen unread sets that was its whole effect, found by
        # totals with the reading taken back
        # first (34, 14), (20, 18) (38bee85); read in the round of routes, opposed steps and counted spans: (39, 7),
        # (21, 12)
        "outside-written 2026-11-30q": ((39, 7), (21, 12)),
        # first (40, 17), (12, 11) (5bca2e6); the round of bounds, homes and sessions: a contradiction more and a
        # false one more, a trade measured once and not looked into (30s, x and y too)
        "outside-written 2026-11-30r": ((42, 18), (13, 9)),
        "outside-written 2026-11-30s": ((43, 12), (21, 9)),  # first (42, 13), (21, 10) (5bca2e6); see 30r, 30p
        # first (30, 15), (16, 19) (74afd4b); its errors read at once (its sentences were printed at conversion)
        "outside-written 2026-11-30t": ((35, 12), (18, 17)),
        "outside-written 2026-11-30u": ((32, 14), (20, 8)),  # first (31, 15), (20, 9) (74afd4b)
        "outside-written 2026-11-30v": ((36, 20), (24, 14)),  # first (35, 21), (24, 15) (3668f43)
        "outside-written 2026-11-30w": ((39, 14), (31, 8)),  # first (38, 14), (31, 9) (3668f43)
        "outside-written 2026-11-30x": ((40, 11), (34, 12)),  # first (40, 9), (34, 13) (438dc1c); see 30r
        # first (36, 11), (26, 10) (438dc1c); see 30p; a false unsupported sentence fewer (routes, opposed steps)
        "outside-written 2026-11-30y": ((37, 12), (25, 9)),
        # first (41, 8), (31, 9) (ecdcb4c), the same after the round of 2026-12-01; its sentences printed once since
        "outside-written 2026-11-30z": ((41, 8), (31, 10)),  # see 30p
        "outside-written 2026-12-01": ((42, 17), (34, 7)),  # first (43, 16), (35, 5) (ecdcb4c); see 30o, 30p
        "outside-written 2026-12-01b": ((34, 16), (32, 19)),  # first (34, 16), (32, 19) (b376ea5)
        "outside-written 2026-12-01c": ((40, 18), (32, 13)),  # first (40, 17), (32, 13) (b376ea5)
        "outside-written 2026-12-01d": ((37, 10), (26, 14)),  # first (38, 10), (26, 13) (f086308)
        "outside-written 2026-12-01e": ((40, 11), (34, 12)),  # first (40, 11), (34, 12) (f086308)
        "outside-written 2026-12-01f": ((40, 13), (28, 11)),  # first (40, 13), (28, 11) (a065328)
        "outside-written 2026-12-01g": ((40, 12), (31, 11)),  # first (40, 12), (31, 11) (a065328)
    }
    for labelled in BUILTIN_SENTENCE_SETS:
        if labelled.name not in floors:
            continue
        items = read_fidelity_items(labelled.path)
        assert len(items) == 160
        (combined,) = asyncio.run(evaluate_checkers(items, ["combined"]))
        figures = combined.by_split["all"].per_label
        for label, (hits, false) in zip(("contradicted", "unsupported"), floors[labelled.name], strict=True):
            found, predicted = int(figures[label]["hits"] or 0), int(figures[label]["predicted"] or 0)
            assert found >= hits, (labelled.name, label)
            assert predicted - found <= false, (labelled.name, label)
