"""How the English check reads (issue 45): short sentences in other languages flagged, English ones kept.

:func:`bedside.text.language.foreign_language` on (1) every distinct sentence, fact and clinician line of
bedside's own guard and fidelity sets and the development sets (English, written for or read by bedside), and
(2) 70 short clinical sentences in sixteen other languages written for this bench. Prints how many of each it
calls foreign (the first should be 0), and the foreign ones it reads as English. The shipped held-out sets are
left out: their sentences stay unread (``tests`` count them, never print them).

Usage: ``python bench/language_check.py``
"""

from __future__ import annotations

import json
from importlib import resources

from bedside.text.language import foreign_language

FOREIGN = (
    "Tome dos pastillas al día.",
    "Tome una tableta cada mañana con comida.",
    "No coma nada después de medianoche.",
    "Me duele la cabeza desde ayer.",
    "Llame al médico si tiene fiebre.",
    "La presión está bien.",
    "Prenez un comprimé le matin.",
    "Ne mangez rien après minuit.",
    "J'ai mal au ventre depuis trois jours.",
    "Appelez votre médecin si la fièvre monte.",
    "Votre tension est normale.",
    "Nehmen Sie zwei Tabletten täglich.",
    "Ich habe seit gestern Kopfschmerzen.",
    "Bitte rufen Sie an, wenn das Fieber steigt.",
    "Der Blutdruck ist gut.",
    "Tome um comprimido de manhã.",
    "Estou com dor de cabeça há dois dias.",
    "Ligue para o médico se tiver febre.",
    "Prenda una compressa ogni mattina.",
    "Ho mal di testa da ieri.",
    "Chiami il medico se ha la febbre.",
    "Neem twee tabletten per dag.",
    "Ik heb sinds gisteren hoofdpijn.",
    "Bel de dokter als de koorts stijgt.",
    "Uminom ng isang tableta tuwing umaga.",
    "Masakit ang ulo ko mula kahapon.",
    "Uống một viên mỗi sáng.",
    "Tôi bị đau đầu từ hôm qua.",
    "Kunywa vidonge viwili kila siku.",
    "Nina maumivu ya kichwa tangu jana.",
    "Ta en tablett varje morgon.",
    "Jeg har hatt hodepine siden i går.",
    "Weź jedną tabletkę rano.",
    "Boli mnie głowa od wczoraj.",
    "Günde iki tablet alın.",
    "Dünden beri başım ağrıyor.",
    "Prinemite tabletku ujutru.",
    "Ota yksi tabletti aamulla.",
    "Minum satu tablet setiap pagi.",
    "Saya sakit kepala sejak kemarin.",
    "Tome la medicina.",
    "Gracias doctor.",
    "Muy bien.",
    "Merci beaucoup.",
    "Danke schön.",
    "Sí, todos los días.",
    "No, nunca.",
    "Oui, tous les jours.",
    "Ja, jeden Tag.",
    "Dolor de pecho.",
    "Mi hija toma insulina.",
    "Tengo diabetes desde hace diez años.",
    "Vivo sola con mi perro.",
    "Je vis seul depuis deux ans.",
    "Ich rauche nicht mehr.",
    "Eu não fumo.",
    "Non bevo alcol.",
    "Ik drink geen alcohol.",
    "Sono allergico alla penicillina.",
    "Soy alérgica a la penicilina.",
    "Je suis allergique à la pénicilline.",
    "Ich bin allergisch gegen Penicillin.",
    "Metformina quinientos miligramos dos veces al día.",
    "Metformine cinq cents milligrammes deux fois par jour.",
    "Paracetamol cada ocho horas.",
    "Ibuprofeno con comida.",
    "Le genou gauche est enflé.",
    "La rodilla derecha está hinchada.",
    "Das linke Knie ist geschwollen.",
    "O joelho esquerdo está inchado.",
)
"""Written for this bench (Spanish, French, German, Portuguese, Italian, Dutch, Tagalog, Vietnamese, Swahili,
Swedish, Norwegian, Polish, Turkish, Croatian/Serbian, Finnish, Indonesian): instructions, symptoms, history."""
DEVELOPMENT = {
    "bedside.tasks.drafting": ["guard_pairs.jsonl", "guard_heldout.jsonl"]
    + [f"guard_heldout_{n}.jsonl" for n in (3, 4, 5, 6, 7, 8, 20)],
    "bedside.sim": ["fidelity_sentences.jsonl", "fidelity_labelled.jsonl"]
    + [f"fidelity_heldout_{n}.jsonl" for n in (2, 3, 4, 5)],
}
"""bedside's own sets and the development sets (their errors read): English sentences the check may be shown."""


def english_sentences() -> list[str]:
    found: set[str] = set()
    for package, files in DEVELOPMENT.items():
        for name in files:
            for line in (resources.files(package) / "data" / name).read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                if "reference" in row:
                    found.update((row["reference"], row["candidate"]))
                else:
                    for key in ("facts", "sentences", "clinician_said"):
                        found.update(row.get(key) or [])
    return sorted(found)


def main() -> None:
    english = english_sentences()
    flagged = [s for s in english if foreign_language(s)]
    missed = [s for s in FOREIGN if foreign_language(s) is None]
    print(f"English sentences called foreign: {len(flagged)} of {len(english)}")
    for sentence in flagged:
        print(f"  {sentence!r}: {foreign_language(sentence)}")
    print(f"foreign sentences called foreign: {len(FOREIGN) - len(missed)} of {len(FOREIGN)}")
    for sentence in missed:
        print(f"  read as English: {sentence!r}")


if __name__ == "__main__":
    main()
