"""Write bedside's clinical EditJudge data: guard pairs, match annotations and held-out theme sentences.

Everything here was written for bedside (no text from any dataset or paper): 25 invented scenarios, oncology
portal messages in the style of OncQA's scenarios and primary-care ones. Each scenario has a model-style draft
(one theme label per draft sentence) and clinician-style reference sentences, each either

- a paraphrase of one draft sentence (a match: the clinician would keep that draft sentence),
- a hard negative against one draft sentence: the same wording almost, but a different medication action, drug,
  dose or number, negation, side or time frame (not a match; nothing else in the draft says it either), or
- content the draft does not have at all (not a match).

From these the script writes, deterministically:

- ``data/guard_pairs.jsonl``: every (reference sentence, draft sentence) paraphrase or hard negative, with its
  kind: the clinical-safety guard's labelled set;
- ``data/match_annotations_clinical.jsonl``: every reference sentence with the whole draft and the gold span
  (the draft sentence for a paraphrase, else null): match annotations in the same form as bedside's first 59;
- ``data/theme_heldout.jsonl``: every draft sentence with its theme: model-style sentences held out from the
  theme classifier's training set, to measure per-theme precision and recall where it matters (drafts).

Run from the repository root: ``python tools/make_editjudge_data.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bedside.text.sentences import split_sentences

DATA = Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "drafting" / "data"

P = "paraphrase"


@dataclass(frozen=True)
class Scenario:
    id: str
    draft: list[tuple[str, str]]  # (sentence, theme)
    refs: list[tuple[str, int | None, str | None]]  # (sentence, draft index or None, kind or None)


SCENARIOS = [
    Scenario(
        "c01",
        [
            ("I'm sorry to hear that the nausea has been so difficult since your last chemotherapy cycle.", "empathy"),
            (
                "Nausea is a common side effect of cisplatin and often peaks two to three days after treatment.",
                "assessment",
            ),
            ("Please continue taking ondansetron 8 mg every 8 hours as needed for nausea.", "planning"),
            ("You can also take prochlorperazine 10 mg if the ondansetron alone is not enough.", "planning"),
            ("Have you been able to keep fluids down over the last day?", "symptom_questions"),
            (
                "If you cannot keep any liquids down for more than 24 hours, please go to the emergency department.",
                "contingency",
            ),
            ("Our oncology nurse will call you tomorrow to check on how you are doing.", "coordination"),
        ],
        [
            ("Sorry the nausea has been so rough after this cycle.", 0, P),
            ("Keep using the ondansetron 8 mg every 8 hours when you need it.", 2, P),
            ("Please stop taking ondansetron 8 mg every 8 hours.", 2, "action"),
            ("Keep using the ondansetron 4 mg every 8 hours when you need it.", 2, "number"),
            ("Are you able to keep liquids down?", 4, P),
            ("If you cannot keep any liquids down for more than 12 hours, go to the emergency department.", 5, "time"),
            ("Our nurse will call you today to see how you are doing.", 6, "time"),
            ("You may also use olanzapine 5 mg at bedtime for nausea.", 3, "drug"),
            ("We may give you IV fluids in the infusion center.", None, None),
            ("Please weigh yourself each morning.", None, None),
        ],
    ),
    Scenario(
        "c02",
        [
            ("Thank you for letting us know about the fever.", "empathy"),
            (
                "A temperature of 100.4 or higher during chemotherapy can be a sign of a serious infection when your white count is low.",
                "assessment",
            ),
            ("Please go to the emergency department right away so they can check your blood counts.", "contingency"),
            ("Do not take acetaminophen before you are seen, because it can hide a fever.", "planning"),
            ("Are you having chills, a cough, or burning when you urinate?", "symptom_questions"),
            ("Bring your list of medications and tell the staff that you are receiving chemotherapy.", "logistics"),
            ("I will let your oncologist know so the team can follow up after your visit.", "coordination"),
        ],
        [
            ("Thanks for telling us about your temperature.", 0, P),
            ("Please go to the ER immediately to have your counts checked.", 2, P),
            ("Please go to the ER tomorrow to have your counts checked.", 2, "time"),
            ("Don't take Tylenol before you are seen since it can mask a fever.", 3, P),
            ("Take Tylenol before you are seen to bring the fever down.", 3, "negation"),
            ("Don't take ibuprofen before you are seen since it can mask a fever.", 3, "drug"),
            ("Do you have chills, cough or pain when you pee?", 4, P),
            ("A temperature of 101.5 or higher during chemotherapy can mean a serious infection.", 1, "number"),
            ("Your next chemotherapy may need to be delayed.", None, None),
            ("Wash your hands often and avoid sick contacts.", None, None),
        ],
    ),
    Scenario(
        "c03",
        [
            ("I understand how worrying it is to notice new swelling in your leg.", "empathy"),
            (
                "Swelling in your left calf after surgery can be caused by a blood clot, so it needs to be checked.",
                "assessment",
            ),
            ("Please come to the clinic today for an ultrasound of your left leg.", "planning"),
            ("Do you have any pain or redness in the calf?", "symptom_questions"),
            ("Continue taking your enoxaparin injections once daily until we review the scan.", "planning"),
            ("If you become short of breath or have chest pain, call 911 right away.", "contingency"),
            ("The front desk will text you the ultrasound appointment time.", "logistics"),
        ],
        [
            ("I know new leg swelling is scary.", 0, P),
            ("Please come in today for an ultrasound of the left leg.", 2, P),
            ("Please come in today for an ultrasound of the right leg.", 2, "laterality"),
            ("Please come in next week for an ultrasound of the left leg.", 2, "time"),
            ("Keep doing your enoxaparin shots once a day until we see the scan.", 4, P),
            ("Stop your enoxaparin shots until we see the scan.", 4, "action"),
            ("Keep doing your heparin shots once a day until we see the scan.", 4, "drug"),
            ("Is the calf painful or red?", 3, P),
            ("Call 911 if you get short of breath or chest pain.", 5, P),
            ("Try to walk a little every hour while you are awake.", None, None),
        ],
    ),
    Scenario(
        "c04",
        [
            ("I'm sorry the cough is keeping you up at night.", "empathy"),
            ("A dry cough is a known side effect of lisinopril, your blood pressure medicine.", "assessment"),
            ("Please do not stop the lisinopril on your own.", "planning"),
            ("I will send a prescription for losartan 50 mg once daily to replace it.", "planning"),
            ("Once you start the losartan, stop taking the lisinopril.", "planning"),
            (
                "Please check your blood pressure at home for the next two weeks and send us the readings.",
                "coordination",
            ),
            ("It can take up to four weeks for the cough to go away after switching.", "assessment"),
        ],
        [
            ("Sorry the cough is keeping you awake.", 0, P),
            ("Please keep taking the lisinopril for now.", 2, P),
            ("Please stop taking the lisinopril now.", 2, "action"),
            ("I am sending in losartan 50 mg once a day instead.", 3, P),
            ("I am sending in losartan 100 mg once a day instead.", 3, "number"),
            ("I am sending in losartan 50 mg twice a day instead.", 3, "time"),
            ("Check your blood pressure at home for two weeks and send me the numbers.", 5, P),
            ("It can take up to a week for the cough to go away after switching.", 6, "time"),
            ("Please come in for a blood test to check your kidney function.", None, None),
            ("Let us know if you notice any lip or tongue swelling.", None, None),
        ],
    ),
    Scenario(
        "c05",
        [
            ("Thank you for reaching out about the mouth sores.", "empathy"),
            ("Mouth sores are common with fluorouracil and usually heal within one to two weeks.", "assessment"),
            ("Rinse your mouth with a salt and baking soda solution four times a day.", "planning"),
            ("You may use the magic mouthwash we prescribed before meals to numb the pain.", "planning"),
            ("Are you able to eat and drink enough?", "symptom_questions"),
            ("Avoid spicy and acidic foods until the sores heal.", "planning"),
            ("If the sores keep you from drinking fluids, call the clinic the same day.", "contingency"),
        ],
        [
            ("Thanks for letting us know about the sores in your mouth.", 0, P),
            ("Rinse with salt and baking soda water four times a day.", 2, P),
            ("Rinse with salt and baking soda water twice a day.", 2, "time"),
            ("Do not rinse with salt and baking soda water.", 2, "negation"),
            ("Can you eat and drink enough?", 4, P),
            ("Mouth sores are common with capecitabine and usually heal within one to two weeks.", 1, "drug"),
            ("Stay away from spicy or acidic food until the sores are better.", 5, P),
            ("We may lower your next fluorouracil dose.", None, None),
            ("Use a soft toothbrush.", None, None),
            ("Please send a photo of the sores through the portal.", None, None),
        ],
    ),
    Scenario(
        "c06",
        [
            ("I'm sorry you're dealing with this knee pain.", "empathy"),
            (
                "Pain on the inside of your right knee after a twist is often a strain of the ligament or the meniscus.",
                "assessment",
            ),
            ("Rest the knee and put ice on it for 20 minutes three times a day.", "planning"),
            ("You can take ibuprofen 400 mg every 6 hours with food for the pain.", "planning"),
            ("Does the knee lock, give way, or swell?", "symptom_questions"),
            ("If you cannot put weight on the leg, please get an X-ray at urgent care.", "contingency"),
            ("I have placed a referral to physical therapy, and they will call you to schedule.", "coordination"),
        ],
        [
            ("Sorry about the knee pain.", 0, P),
            ("Ice the knee for 20 minutes three times a day and rest it.", 2, P),
            ("Ice the knee for 20 minutes once a day and rest it.", 2, "time"),
            ("Take ibuprofen 400 mg every 6 hours with food.", 3, P),
            ("Take ibuprofen 800 mg every 6 hours with food.", 3, "number"),
            ("Take naproxen 400 mg every 6 hours with food.", 3, "drug"),
            (
                "Pain on the inside of your left knee after a twist is often a ligament or meniscus strain.",
                1,
                "laterality",
            ),
            ("Does the knee lock up or give out?", 4, P),
            ("Physical therapy will call you to set up visits.", 6, P),
            ("Wear a knee brace when you walk.", None, None),
        ],
    ),
    Scenario(
        "c07",
        [
            ("It sounds like the fatigue has been really hard on you.", "empathy"),
            (
                "Fatigue is very common during radiation and tends to build up over the course of treatment.",
                "assessment",
            ),
            ("Try to take a short walk every day, since light activity can improve energy.", "planning"),
            ("Your last hemoglobin was 9.8, which is a little low and may add to the tiredness.", "assessment"),
            ("Are you sleeping more than usual, or having trouble sleeping?", "symptom_questions"),
            ("We will recheck your blood counts at your visit on Thursday.", "coordination"),
            ("If you feel dizzy or faint, please call us right away.", "contingency"),
        ],
        [
            ("I can tell the tiredness has been hard.", 0, P),
            ("Tiredness is expected with radiation and builds up over the weeks of treatment.", 1, P),
            ("A short walk each day can help your energy.", 2, P),
            ("Your last hemoglobin was 8.9, which is a little low and may add to the fatigue.", 3, "number"),
            ("We will repeat your blood counts at your visit on Friday.", 5, "time"),
            ("We will repeat your blood counts at your visit on Thursday.", 5, P),
            ("If you feel dizzy or faint, call us immediately.", 6, P),
            ("Fatigue is not common during radiation.", 1, "negation"),
            ("We may consider a blood transfusion.", None, None),
            ("Are you eating enough protein?", None, None),
        ],
    ),
    Scenario(
        "c08",
        [
            ("Thank you for sending your blood sugar readings.", "empathy"),
            ("Your morning readings between 180 and 220 are higher than we would like.", "assessment"),
            ("Please increase your glargine from 20 units to 24 units at bedtime.", "planning"),
            ("Keep taking metformin 1000 mg twice a day with meals.", "planning"),
            ("Are you having any low blood sugars, shakiness or sweating at night?", "symptom_questions"),
            ("Send us your readings again in one week through the portal.", "coordination"),
            ("If your sugar is below 70, drink juice and recheck in 15 minutes.", "contingency"),
        ],
        [
            ("Thanks for the sugar log.", 0, P),
            ("Raise the glargine from 20 to 24 units at bedtime.", 2, P),
            ("Lower the glargine from 20 to 16 units at bedtime.", 2, "action"),
            ("Raise the glargine from 20 to 24 units in the morning.", 2, "time"),
            ("Continue metformin 1000 mg twice daily with food.", 3, P),
            ("Continue metformin 500 mg twice daily with food.", 3, "number"),
            ("Continue glipizide 1000 mg twice daily with food.", 3, "drug"),
            ("Please message me your numbers again in a week.", 5, P),
            ("Any lows, shakiness or night sweats?", 4, P),
            ("Please see the diabetes educator.", None, None),
        ],
    ),
    Scenario(
        "c09",
        [
            ("I'm sorry to hear about the rash on your hands.", "empathy"),
            ("Redness and peeling on the palms is hand-foot syndrome, a side effect of capecitabine.", "assessment"),
            ("Please hold your capecitabine until we see you on Monday.", "planning"),
            ("Apply a urea cream to your hands and feet twice a day.", "planning"),
            ("Is the skin blistering, or is it painful to walk or hold things?", "symptom_questions"),
            ("Keep your hands and feet cool and avoid hot water.", "planning"),
            ("If you develop a fever or open sores, go to the emergency room.", "contingency"),
        ],
        [
            ("Sorry about the rash on your hands.", 0, P),
            ("Hold the capecitabine until your visit on Monday.", 2, P),
            ("Continue the capecitabine until your visit on Monday.", 2, "action"),
            ("Hold the capecitabine until your visit on Wednesday.", 2, "time"),
            ("Use urea cream on your hands and feet twice daily.", 3, P),
            ("Use urea cream on your hands and feet four times daily.", 3, "time"),
            ("Redness and peeling on the palms is hand-foot syndrome, a side effect of sunitinib.", 1, "drug"),
            ("Are there blisters, or does it hurt to walk or grip?", 4, P),
            ("We will probably lower the dose when you restart.", None, None),
            ("Wear loose cotton socks.", None, None),
        ],
    ),
    Scenario(
        "c10",
        [
            ("I can imagine how uncomfortable the constipation must be.", "empathy"),
            (
                "Oxycodone often causes constipation, so most people need a daily bowel regimen while taking it.",
                "assessment",
            ),
            ("Take senna two tablets at bedtime every night.", "planning"),
            (
                "You can add polyethylene glycol one capful daily if you have not had a bowel movement in two days.",
                "planning",
            ),
            ("When was your last bowel movement?", "symptom_questions"),
            ("Drink at least eight glasses of water a day.", "planning"),
            ("If you have severe belly pain or vomiting, call us right away.", "contingency"),
        ],
        [
            ("That sounds really uncomfortable.", 0, P),
            ("Take two senna tablets every night at bedtime.", 2, P),
            ("Take one senna tablet every night at bedtime.", 2, "number"),
            ("Take two senna tablets every morning.", 2, "time"),
            ("Stop the senna tablets at bedtime.", 2, "action"),
            ("When did you last move your bowels?", 4, P),
            ("Add one capful of MiraLAX daily if there is no bowel movement in two days.", 3, P),
            ("Add one capful of lactulose daily if there is no bowel movement in two days.", 3, "drug"),
            ("We may change you to a different pain medicine.", None, None),
            ("Try prunes or more fiber in your diet.", None, None),
        ],
    ),
    Scenario(
        "c11",
        [
            ("Thanks for checking in before your procedure.", "empathy"),
            (
                "Because you take apixaban, we need to plan around your colonoscopy to lower the risk of bleeding.",
                "assessment",
            ),
            ("Please stop apixaban two days before the colonoscopy.", "planning"),
            ("Do not stop your aspirin unless the gastroenterologist tells you to.", "planning"),
            ("Restart apixaban the day after the procedure if there was no bleeding.", "planning"),
            ("I have sent these instructions to the endoscopy team.", "coordination"),
            ("The preparation instructions and arrival time are in your portal inbox.", "logistics"),
        ],
        [
            ("Thanks for reaching out before the procedure.", 0, P),
            ("Stop the apixaban two days before your colonoscopy.", 2, P),
            ("Stop the apixaban five days before your colonoscopy.", 2, "time"),
            ("Stop the warfarin two days before your colonoscopy.", 2, "drug"),
            ("Keep taking your aspirin unless GI tells you otherwise.", 3, P),
            ("Stop your aspirin before the procedure.", 3, "action"),
            ("Restart apixaban the day after if there was no bleeding.", 4, P),
            ("Do not restart apixaban the day after the procedure.", 4, "negation"),
            ("Someone must drive you home afterward.", None, None),
            ("Please call if you have any black stools.", None, None),
        ],
    ),
    Scenario(
        "c12",
        [
            ("I'm sorry you're having trouble with your eye.", "empathy"),
            ("Redness and sticky discharge in one eye is most likely bacterial conjunctivitis.", "assessment"),
            (
                "I will send erythromycin ointment to your pharmacy; apply it to the right eye four times a day for five days.",
                "planning",
            ),
            ("Is your vision blurry, or does light hurt your eye?", "symptom_questions"),
            ("Wash your hands often and don't share towels, since this spreads easily.", "planning"),
            ("If your vision changes or the pain gets worse, you need to be seen today.", "contingency"),
            ("Your prescription will be ready at the pharmacy on Main Street after 3 pm.", "logistics"),
        ],
        [
            ("Sorry your eye is bothering you.", 0, P),
            ("Put the erythromycin ointment in the right eye four times a day for five days.", 2, P),
            ("Put the erythromycin ointment in the left eye four times a day for five days.", 2, "laterality"),
            ("Put the erythromycin ointment in the right eye four times a day for ten days.", 2, "time"),
            ("Put the tobramycin drops in the right eye four times a day for five days.", 2, "drug"),
            ("Any blurry vision or sensitivity to light?", 3, P),
            ("If the vision changes or pain worsens, you should be seen the same day.", 5, P),
            ("Redness and discharge in one eye is not likely to be an infection.", 1, "negation"),
            ("Stop wearing contact lenses until it clears.", None, None),
            ("It is fine to go to work after 24 hours of treatment.", None, None),
        ],
    ),
    Scenario(
        "c13",
        [
            ("I know waiting for scan results is stressful.", "empathy"),
            ("Your CT scan from Tuesday shows that the liver lesions are smaller than in March.", "assessment"),
            ("This means the treatment is working, and we plan to continue the same regimen.", "assessment"),
            ("Your next cycle of FOLFOX is scheduled for the 14th.", "logistics"),
            ("Dr. Patel will go over the images with you in detail at your next visit.", "coordination"),
            ("Do you have any questions about the results before then?", "other"),
            ("Please keep taking dexamethasone 4 mg on the morning after each infusion.", "planning"),
        ],
        [
            ("I know the wait for results is hard.", 0, P),
            ("The CT from Tuesday shows the liver spots have shrunk since March.", 1, P),
            ("The CT from Tuesday shows the liver spots have not shrunk since March.", 1, "negation"),
            ("The treatment is working and we will keep the same plan.", 2, P),
            ("Keep taking dexamethasone 4 mg the morning after each infusion.", 6, P),
            ("Keep taking dexamethasone 8 mg the morning after each infusion.", 6, "number"),
            ("Keep taking prednisone 4 mg the morning after each infusion.", 6, "drug"),
            ("Your next FOLFOX cycle is on the 21st.", 3, "number"),
            ("Dr. Patel will review the pictures with you at your next appointment.", 4, P),
            ("We will repeat the scan in three months.", None, None),
        ],
    ),
    Scenario(
        "c14",
        [
            ("Thank you for letting me know about the dizziness.", "empathy"),
            (
                "Feeling lightheaded when you stand up can happen when blood pressure medicines lower your pressure too much.",
                "assessment",
            ),
            ("Please decrease your amlodipine from 10 mg to 5 mg daily.", "planning"),
            ("What have your home blood pressure readings been?", "symptom_questions"),
            ("Stand up slowly and sit down right away if you feel lightheaded.", "planning"),
            ("If you faint or hit your head, go to the emergency department.", "contingency"),
            ("Let's schedule a visit in two weeks to recheck your blood pressure.", "logistics"),
        ],
        [
            ("Thanks for telling me about the dizziness.", 0, P),
            ("Cut the amlodipine from 10 mg down to 5 mg a day.", 2, P),
            ("Raise the amlodipine from 5 mg to 10 mg a day.", 2, "action"),
            ("Cut the amlodipine from 10 mg down to 2.5 mg a day.", 2, "number"),
            ("Cut the metoprolol from 10 mg down to 5 mg a day.", 2, "drug"),
            ("What are your blood pressures at home?", 3, P),
            ("Get up slowly, and sit right down if you feel lightheaded.", 4, P),
            ("Let's set up a visit in four weeks to recheck your pressure.", 6, "time"),
            ("Make sure you are drinking enough fluids.", None, None),
            ("Please bring your blood pressure cuff to the visit.", None, None),
        ],
    ),
    Scenario(
        "c15",
        [
            ("I'm so sorry about the pain in your shoulder.", "empathy"),
            (
                "New pain in your left shoulder after your mastectomy can come from tight muscles or from the surgery itself.",
                "assessment",
            ),
            ("Please start the gentle arm exercises from your discharge packet twice a day.", "planning"),
            ("Have you noticed any swelling in your left arm or hand?", "symptom_questions"),
            ("You may take acetaminophen 650 mg every 6 hours for pain.", "planning"),
            ("I have asked the lymphedema therapist to contact you this week.", "coordination"),
            ("If the arm becomes red, hot or swollen, call us the same day.", "contingency"),
        ],
        [
            ("Sorry your shoulder is hurting.", 0, P),
            ("Start the gentle arm exercises from your packet twice daily.", 2, P),
            ("Stop the arm exercises from your packet.", 2, "action"),
            ("Is there any swelling in the left arm or hand?", 3, P),
            ("Is there any swelling in the right arm or hand?", 3, "laterality"),
            ("Take Tylenol 650 mg every 6 hours for the pain.", 4, P),
            ("Take Tylenol 325 mg every 6 hours for the pain.", 4, "number"),
            ("The lymphedema therapist will reach out to you next week.", 5, "time"),
            ("We may order an ultrasound of the arm.", None, None),
            ("Avoid lifting more than 10 pounds with that arm.", None, None),
        ],
    ),
    Scenario(
        "c16",
        [
            ("Thank you for asking about your refill.", "empathy"),
            ("I have sent a 90-day refill of atorvastatin 40 mg to your mail-order pharmacy.", "logistics"),
            ("Your cholesterol results from last month look good on this dose.", "assessment"),
            ("Continue taking atorvastatin 40 mg every evening.", "planning"),
            ("Are you having any muscle aches on the atorvastatin?", "medication_questions"),
            ("You are due for a fasting cholesterol test in six months.", "logistics"),
            ("Please call the pharmacy if the refill has not arrived in 10 days.", "contingency"),
        ],
        [
            ("Thanks for the refill request.", 0, P),
            ("I sent a 90-day supply of atorvastatin 40 mg to your mail-order pharmacy.", 1, P),
            ("I sent a 30-day supply of atorvastatin 40 mg to your mail-order pharmacy.", 1, "time"),
            ("Keep taking atorvastatin 40 mg each evening.", 3, P),
            ("Keep taking atorvastatin 80 mg each evening.", 3, "number"),
            ("Keep taking rosuvastatin 40 mg each evening.", 3, "drug"),
            ("Any muscle aches on the statin?", 4, P),
            ("Your cholesterol last month does not look good on this dose.", 2, "negation"),
            ("Your next check-up is in the spring.", None, None),
            ("Keep up the good work with your diet.", None, None),
        ],
    ),
    Scenario(
        "c17",
        [
            ("I'm sorry to hear the neuropathy is getting worse.", "empathy"),
            ("Numbness and tingling in the hands and feet is a known side effect of paclitaxel.", "assessment"),
            ("We will reduce your paclitaxel dose by 20 percent starting with your next cycle.", "planning"),
            ("Is the numbness making it hard to button your shirt or walk?", "symptom_questions"),
            ("You can start duloxetine 30 mg daily, which may ease the burning pain.", "planning"),
            ("Please be careful on stairs and check your feet every day for injuries.", "planning"),
            ("Your oncologist will review how you are doing at your visit next week.", "coordination"),
        ],
        [
            ("Sorry the numbness is worse.", 0, P),
            ("We'll lower your paclitaxel dose by 20 percent from the next cycle.", 2, P),
            ("We'll raise your paclitaxel dose by 20 percent from the next cycle.", 2, "action"),
            ("We'll lower your paclitaxel dose by 50 percent from the next cycle.", 2, "number"),
            ("We'll lower your oxaliplatin dose by 20 percent from the next cycle.", 2, "drug"),
            ("Does the numbness make it hard to do buttons or walk?", 3, P),
            ("You can begin duloxetine 30 mg once a day to help the burning.", 4, P),
            ("You can begin gabapentin 300 mg once a day to help the burning.", 4, "drug"),
            ("Your oncologist will check in with you at next week's visit.", 6, P),
            ("We may need to stop the paclitaxel altogether.", None, None),
        ],
    ),
    Scenario(
        "c18",
        [
            ("Thanks for letting us know that your child has a fever and ear pain.", "empathy"),
            ("Ear pain with fever in a child is often an ear infection.", "assessment"),
            ("Give amoxicillin 90 mg per kg per day divided twice a day for 10 days.", "planning"),
            ("Is she drinking and making wet diapers?", "symptom_questions"),
            ("You can give ibuprofen for pain and fever.", "planning"),
            ("If she is not better in 48 hours, please bring her in.", "contingency"),
            ("We have openings tomorrow morning if you would like her to be seen.", "logistics"),
        ],
        [
            ("Thanks for letting us know about her fever and ear pain.", 0, P),
            ("Give amoxicillin 90 mg per kg per day split into two doses for 10 days.", 2, P),
            ("Give amoxicillin 45 mg per kg per day split into two doses for 10 days.", 2, "number"),
            ("Give amoxicillin 90 mg per kg per day split into two doses for 5 days.", 2, "time"),
            ("Give azithromycin 90 mg per kg per day split into two doses for 10 days.", 2, "drug"),
            ("Is she drinking well and wetting diapers?", 3, P),
            ("If she is not better in 72 hours, bring her in.", 5, "time"),
            ("Do not give ibuprofen for the pain or fever.", 4, "negation"),
            ("Which ear is she pulling at?", None, None),
            ("Keep her home from daycare until the fever is gone.", None, None),
        ],
    ),
    Scenario(
        "c19",
        [
            ("I'm sorry you are feeling so short of breath.", "empathy"),
            ("Increased wheezing and cough can mean your COPD is flaring up.", "assessment"),
            ("Use your albuterol inhaler 2 puffs every 4 hours as needed.", "planning"),
            ("I am prescribing prednisone 40 mg daily for 5 days.", "planning"),
            ("Are you coughing up more sputum than usual, or has the color changed?", "symptom_questions"),
            ("Continue your tiotropium inhaler once daily.", "planning"),
            ("If your lips turn blue or you cannot speak in full sentences, call 911.", "contingency"),
        ],
        [
            ("Sorry you are so short of breath.", 0, P),
            ("Use the albuterol 2 puffs every 4 hours when needed.", 2, P),
            ("Use the albuterol 4 puffs every 4 hours when needed.", 2, "number"),
            ("I'm sending prednisone 40 mg a day for 5 days.", 3, P),
            ("I'm sending prednisone 40 mg a day for 14 days.", 3, "time"),
            ("I'm sending prednisone 20 mg a day for 5 days.", 3, "number"),
            ("Keep using tiotropium once a day.", 5, P),
            ("Stop using tiotropium for now.", 5, "action"),
            ("Is there more phlegm, or a change in its color?", 4, P),
            ("We can see you in the clinic this afternoon.", None, None),
        ],
    ),
    Scenario(
        "c20",
        [
            ("Thank you for your question about the new pill.", "empathy"),
            ("Letrozole lowers estrogen levels, which helps prevent the breast cancer from coming back.", "assessment"),
            ("Joint stiffness and hot flashes are common in the first few months.", "assessment"),
            ("Take letrozole 2.5 mg once daily, at the same time every day.", "planning"),
            ("Have you noticed any joint pain or hot flashes so far?", "medication_questions"),
            ("We will check your bone density before your next visit.", "planning"),
            ("Please call if the side effects keep you from doing your daily activities.", "contingency"),
        ],
        [
            ("Thanks for asking about the new medicine.", 0, P),
            ("Take letrozole 2.5 mg every day at the same time.", 3, P),
            ("Take letrozole 5 mg every day at the same time.", 3, "number"),
            ("Take anastrozole 2.5 mg every day at the same time.", 3, "drug"),
            ("Have you had any joint aches or hot flashes yet?", 4, P),
            ("Joint stiffness and hot flashes are not common in the first months.", 2, "negation"),
            ("We'll get a bone density scan before you come back.", 5, P),
            ("Call us if the side effects get in the way of daily life.", 6, P),
            ("Calcium and vitamin D supplements are a good idea.", None, None),
            ("You will take it for at least five years.", None, None),
        ],
    ),
    Scenario(
        "c21",
        [
            ("I'm sorry to hear about the burning when you urinate.", "empathy"),
            ("Burning and frequent urination are typical of a bladder infection.", "assessment"),
            ("I have sent nitrofurantoin 100 mg twice a day for 5 days to your pharmacy.", "planning"),
            ("Do you have a fever, back pain, or blood in your urine?", "symptom_questions"),
            ("Drink plenty of water while you take the antibiotic.", "planning"),
            ("If you develop a fever or pain in your right flank, you should be seen today.", "contingency"),
            ("You can drop off a urine sample at the lab tomorrow morning if you would like it tested.", "logistics"),
        ],
        [
            ("Sorry about the burning with urination.", 0, P),
            ("I sent nitrofurantoin 100 mg twice daily for 5 days.", 2, P),
            ("I sent nitrofurantoin 100 mg twice daily for 7 days.", 2, "time"),
            ("I sent ciprofloxacin 100 mg twice daily for 5 days.", 2, "drug"),
            ("Any fever, back pain or blood in the urine?", 3, P),
            ("If you get a fever or pain in your left flank, you should be seen today.", 5, "laterality"),
            ("Burning and frequent urination are not typical of a bladder infection.", 1, "negation"),
            ("Drink lots of water while on the antibiotic.", 4, P),
            ("Avoid caffeine and alcohol for a few days.", None, None),
            ("Let us know if you could be pregnant.", None, None),
        ],
    ),
    Scenario(
        "c22",
        [
            ("I understand it is upsetting to have the treatment delayed.", "empathy"),
            ("Your neutrophil count today was 0.8, which is too low to give chemotherapy safely.", "assessment"),
            ("We will postpone your infusion by one week and repeat your labs next Monday.", "planning"),
            ("We will also add pegfilgrastim after your next cycle to help your counts recover.", "planning"),
            ("Are you having any fevers or chills?", "symptom_questions"),
            ("The infusion center will call you to reschedule.", "coordination"),
            ("If your temperature reaches 100.4, go to the emergency department right away.", "contingency"),
        ],
        [
            ("I know the delay is frustrating.", 0, P),
            ("Your neutrophil count today was 0.8, too low for chemo to be safe.", 1, P),
            ("Your neutrophil count today was 1.8, too low for chemo to be safe.", 1, "number"),
            ("We will push the infusion back a week and recheck labs next Monday.", 2, P),
            ("We will push the infusion back two weeks and recheck labs next Monday.", 2, "time"),
            ("We will not add pegfilgrastim after your next cycle.", 3, "negation"),
            ("We will add filgrastim after your next cycle to help your counts recover.", 3, "drug"),
            ("Any fevers or chills?", 4, P),
            ("The infusion center will reach out to reschedule.", 5, P),
            ("Avoid crowds while your counts are low.", None, None),
        ],
    ),
    Scenario(
        "c23",
        [
            ("Thanks for letting me know how the new medication is going.", "empathy"),
            ("Sertraline can cause an upset stomach and trouble sleeping in the first couple of weeks.", "assessment"),
            ("These side effects usually improve, so I recommend continuing sertraline 50 mg daily.", "planning"),
            ("Taking it in the morning with breakfast may help with both.", "planning"),
            ("How has your mood been since you started it?", "symptom_questions"),
            ("Let's plan a video visit in four weeks to see how you are doing.", "logistics"),
            (
                "If you have any thoughts of harming yourself, call 988 or go to the nearest emergency room.",
                "contingency",
            ),
        ],
        [
            ("Thanks for the update on the new medicine.", 0, P),
            ("Keep taking sertraline 50 mg a day, since these side effects usually get better.", 2, P),
            ("Stop taking sertraline 50 mg a day, since these side effects usually get worse.", 2, "action"),
            ("Keep taking sertraline 100 mg a day, since these side effects usually get better.", 2, "number"),
            ("Keep taking fluoxetine 50 mg a day, since these side effects usually get better.", 2, "drug"),
            ("Taking it in the evening may help with both.", 3, "time"),
            ("How is your mood since starting it?", 4, P),
            ("Let's do a video visit in four weeks.", 5, P),
            ("Please avoid alcohol while on it.", None, None),
            ("It can take six weeks to feel the full benefit.", None, None),
        ],
    ),
    Scenario(
        "c24",
        [
            ("I'm sorry your back has been bothering you.", "empathy"),
            (
                "Pain in the lower back after lifting is usually a muscle strain and gets better within a few weeks.",
                "assessment",
            ),
            ("Stay as active as you can and avoid bed rest.", "planning"),
            ("You may use a heating pad for 15 minutes at a time.", "planning"),
            ("Do you have any numbness in your legs, or trouble controlling your bladder?", "symptom_questions"),
            (
                "If you have weakness in your legs or lose control of your bladder, go to the emergency room right away.",
                "contingency",
            ),
            ("We can see you next week if the pain is not improving.", "logistics"),
        ],
        [
            ("Sorry your back is hurting.", 0, P),
            ("Lower back pain after lifting is usually a strained muscle that heals in a few weeks.", 1, P),
            ("Lower back pain after lifting is not usually a strained muscle.", 1, "negation"),
            ("Keep moving as much as you can, and don't stay in bed.", 2, P),
            ("Use a heating pad for 30 minutes at a time.", 3, "number"),
            ("Any numbness in the legs or bladder trouble?", 4, P),
            ("We can see you tomorrow if the pain is not getting better.", 6, "time"),
            ("Go to the ER right away if your legs get weak or you lose bladder control.", 5, P),
            ("Ibuprofen with food can help.", None, None),
            ("Physical therapy is a good option if it lasts.", None, None),
        ],
    ),
    Scenario(
        "c25",
        [
            ("Thank you for the update on your breathing after radiation.", "empathy"),
            (
                "A dry cough and shortness of breath a few weeks after chest radiation can be radiation pneumonitis.",
                "assessment",
            ),
            ("Please get a chest X-ray today at the imaging center.", "planning"),
            ("Do you have a fever or are you coughing up blood?", "symptom_questions"),
            ("If the X-ray shows inflammation, we will start prednisone 60 mg daily.", "planning"),
            ("I will call you this evening with the results.", "coordination"),
            ("If you become very short of breath at rest, call 911.", "contingency"),
        ],
        [
            ("Thanks for updating us on your breathing.", 0, P),
            ("Please get a chest X-ray today.", 2, P),
            ("Please get a chest X-ray next week.", 2, "time"),
            ("Are you running a fever or coughing up blood?", 3, P),
            ("If it shows inflammation, we'll start prednisone 60 mg once a day.", 4, P),
            ("If it shows inflammation, we'll start prednisone 20 mg once a day.", 4, "number"),
            ("If it shows inflammation, we'll start dexamethasone 60 mg once a day.", 4, "drug"),
            ("I will call you tonight with the results.", 5, P),
            ("We may also check your oxygen level.", None, None),
            ("The cough may take weeks to settle.", None, None),
        ],
    ),
]


# Pairs for the guard alone (not in any draft: they change no match annotation or threshold). Each tests one
# way a reversal escaped the set-based guard, with paraphrases of the same shapes that must still pass:
# (category, kind, reference sentence, draft sentence); kind is "paraphrase" or the conflict kind expected.
GUARD_ONLY: list[tuple[str, str, str, str]] = [
    # Doses swapped within one sentence: the same numbers, bound to other drugs or times.
    ("dose order", "number", "Take metoprolol 25 mg in the morning and 50 mg at night.", "Take metoprolol 50 mg in the morning and 25 mg at night."),
    ("dose order", "number", "Take 1 tablet in the morning and 2 tablets at bedtime.", "Take 2 tablets in the morning and 1 tablet at bedtime."),
    ("dose order", "number", "Take furosemide 40 mg and potassium 20 mmol each morning.", "Take furosemide 20 mg and potassium 40 mmol each morning."),
    ("dose order", "number", "Use 10 units of insulin before breakfast and 6 units before dinner.", "Use 6 units of insulin before breakfast and 10 units before dinner."),
    ("dose order", "number", "Lower the prednisone from 20 mg to 10 mg this week.", "Lower the prednisone from 10 mg to 20 mg this week."),
    ("dose order", "number", "Take 2 tablets today and then 1 tablet a day for four more days.", "Take 1 tablet today and then 2 tablets a day for four more days."),
    ("dose order", "number", "Take amlodipine 5 mg and lisinopril 10 mg once a day.", "Take amlodipine 10 mg and lisinopril 5 mg once a day."),
    ("dose order", "number", "Give 5 ml of the liquid in the morning and 10 ml at night.", "Give 10 ml of the liquid in the morning and 5 ml at night."),
    ("dose order", "number", "Use 2 puffs of albuterol in the morning and 1 puff in the evening.", "Use 1 puff of albuterol in the morning and 2 puffs in the evening."),
    ("dose order", "number", "Raise the gabapentin from 300 mg to 600 mg at night.", "Raise the gabapentin from 600 mg to 300 mg at night."),
    ("dose order", "number", "Take sertraline 50 mg and trazodone 100 mg at bedtime.", "Take sertraline 100 mg and trazodone 50 mg at bedtime."),
    ("dose order", P, "Take metoprolol 25 mg in the morning and 50 mg at night.", "Take metoprolol 50 mg at night and 25 mg in the morning."),
    ("dose order", P, "Take amlodipine 5 mg and lisinopril 10 mg once a day.", "Take lisinopril 10 mg and amlodipine 5 mg once a day."),
    ("dose order", P, "Raise the gabapentin from 300 mg to 600 mg at night.", "Increase your bedtime gabapentin from 300 to 600 mg."),
    ("dose order", P, "Take 2 tablets today and then 1 tablet a day for four more days.", "Today take 2 tablets, then 1 tablet a day for four more days."),
    # Polarity without an action verb: "no need to keep taking" is stop, "be sure to finish" is continue.
    ("implicit polarity", "action", "Please keep taking the amlodipine.", "There is no need to keep taking the amlodipine."),
    ("implicit polarity", "action", "Be sure to finish the cephalexin.", "You can stop the cephalexin once the redness is gone."),
    ("implicit polarity", "action", "Be sure to finish the full course of azithromycin.", "You are done with the azithromycin after today."),
    ("implicit polarity", "action", "Keep using the hydrocortisone cream on the rash.", "You no longer need the hydrocortisone cream on the rash."),
    ("implicit polarity", "action", "Finish the rest of your antibiotics even if you feel better.", "No more antibiotics once you feel better."),
    ("implicit polarity", "action", "Stay on the apixaban until the scan.", "The apixaban is no longer needed before the scan."),
    ("implicit polarity", "action", "Continue the vitamin D.", "You don't need the vitamin D anymore."),
    ("implicit polarity", "action", "Take the nitrofurantoin until the bottle is empty.", "You can be done with the nitrofurantoin once you feel better."),
    ("implicit polarity", "action", "Complete the whole course of doxycycline.", "There's no need to finish the course of doxycycline."),
    ("implicit polarity", "action", "Keep giving her the amoxicillin until it is all gone.", "She is done with the amoxicillin."),
    ("implicit polarity", P, "Stop the amlodipine.", "There is no need to keep taking the amlodipine."),
    ("implicit polarity", P, "Be sure to finish the full course of azithromycin.", "Keep taking the azithromycin until it is all gone."),
    ("implicit polarity", P, "You no longer need the hydrocortisone cream.", "You can stop using the hydrocortisone cream."),
    ("implicit polarity", P, "Please don't stop the apixaban before the scan.", "Stay on the apixaban until the scan."),
    ("implicit polarity", P, "Stop the ibuprofen for now.", "No more ibuprofen for now."),
    # Food timing reversed.
    ("food", "time", "Take the metformin with meals.", "Take the metformin on an empty stomach."),
    ("food", "time", "Take levothyroxine 30 minutes before breakfast.", "Take levothyroxine 30 minutes after breakfast."),
    ("food", "time", "Take the prednisone after eating.", "Take the prednisone without food."),
    ("food", "time", "Take alendronate first thing in the morning on an empty stomach.", "Take alendronate first thing in the morning with a meal."),
    ("food", "time", "Take the ibuprofen with a snack so it doesn't upset your stomach.", "Take the ibuprofen between meals so it doesn't upset your stomach."),
    ("food", "time", "Take the doxycycline with food and a full glass of water.", "Take the doxycycline away from food with a full glass of water."),
    ("food", "time", "Take the iron tablet between meals.", "Take the iron tablet with a meal."),
    ("food", "time", "Give the amoxicillin with food.", "Give the amoxicillin before meals."),
    ("food", "time", "Take the tamoxifen with dinner.", "Take the tamoxifen before dinner."),
    ("food", "time", "Take the pancreatic enzymes with each meal.", "Take the pancreatic enzymes on an empty stomach."),
    ("food", P, "Take the metformin with meals.", "Take the metformin with food."),
    ("food", P, "Take levothyroxine on an empty stomach.", "Take levothyroxine 30 minutes before breakfast."),
    ("food", P, "Take the ibuprofen with food.", "Do not take the ibuprofen on an empty stomach."),
    ("food", P, "Take the prednisone after breakfast.", "Take the prednisone in the morning with food."),
    # Drug classes named by class rather than by drug.
    ("drug class", "drug", "Start a statin for your cholesterol.", "Start a beta blocker for your cholesterol."),
    ("drug class", "drug", "You can take an antihistamine at night for the itching.", "You can take a steroid at night for the itching."),
    ("drug class", "drug", "Hold your blood thinner for two days before the biopsy.", "Hold your water pill for two days before the biopsy."),
    ("drug class", "drug", "Take an antacid for the heartburn.", "Take an NSAID for the heartburn."),
    ("drug class", "drug", "I am sending an antiviral for the cold sores.", "I am sending an antibiotic for the cold sores."),
    ("drug class", "drug", "Take atorvastatin at bedtime.", "Take your blood pressure pill at bedtime."),
    ("drug class", "drug", "Your opioid can cause constipation, so take a stool softener.", "Your opioid can cause constipation, so take a muscle relaxant."),
    ("drug class", "drug", "Stop the NSAID while your kidneys recover.", "Stop the ACE inhibitor while your kidneys recover."),
    ("drug class", "drug", "An SSRI can help with the hot flashes.", "A benzodiazepine can help with the hot flashes."),
    ("drug class", "drug", "Take an antifungal for the thrush.", "Take an antibiotic for the thrush."),
    ("drug class", "drug", "Keep taking ibuprofen for the knee pain.", "Keep taking your opioid for the knee pain."),
    ("drug class", "drug", "Take your diuretic in the morning.", "Take your antidepressant in the morning."),
    ("drug class", P, "Take your statin at bedtime.", "Take the atorvastatin at bedtime."),
    ("drug class", P, "Hold your blood thinner for two days before the biopsy.", "Hold the apixaban for two days before the biopsy."),
    ("drug class", P, "Take an antihistamine for the itching.", "Take an allergy pill for the itching."),
    ("drug class", P, "Keep taking your water pill.", "Keep taking the furosemide."),
    ("drug class", P, "An NSAID like ibuprofen can help the swelling.", "Ibuprofen can help the swelling."),
    # Plan verbs: postpone, proceed, cancel.
    ("plan", "action", "We will postpone your chemotherapy by one week.", "We will proceed with your chemotherapy as planned."),
    ("plan", "action", "Let's go ahead with the colonoscopy as scheduled.", "Let's cancel the colonoscopy."),
    ("plan", "action", "The surgery is postponed until your blood sugar is under control.", "The surgery will go ahead even if your blood sugar is high."),
    ("plan", "action", "We should delay the next infusion until your counts recover.", "We should go ahead with the next infusion before your counts recover."),
    ("plan", "action", "Your MRI has been cancelled.", "Your MRI will proceed as planned."),
    ("plan", "action", "Please reschedule the biopsy.", "Please keep the biopsy as scheduled."),
    ("plan", "action", "We will proceed with radiation on Monday.", "We will put off radiation until Monday."),
    ("plan", "action", "Your dental extraction can go ahead.", "Your dental extraction should be delayed."),
    ("plan", "action", "We are calling off the stress test.", "We are moving forward with the stress test."),
    ("plan", "action", "Do not postpone your mammogram.", "Postpone your mammogram."),
    ("plan", P, "We will postpone the infusion by a week.", "We will delay the infusion by a week."),
    ("plan", P, "Let's go ahead with the colonoscopy.", "We will proceed with the colonoscopy as planned."),
    ("plan", P, "Your MRI has been cancelled.", "We have called off your MRI."),
    ("plan", P, "We will hold your chemotherapy this week.", "We will postpone your chemotherapy this week."),
    ("plan", P, "Do not postpone your mammogram.", "Keep your mammogram as scheduled."),
    # Gerunds of verbs ending in -e ("increasing"), read as actions.
    ("gerund", "action", "I recommend continuing the omeprazole at the same dose.", "I recommend increasing the omeprazole dose."),
    ("gerund", "action", "We are continuing your amlodipine.", "We are reducing your amlodipine."),
    ("gerund", "action", "I suggest staying on the sertraline.", "I suggest discontinuing the sertraline."),
    ("gerund", "action", "We are starting you on allopurinol.", "We are pausing your allopurinol."),
    ("gerund", "action", "I am holding your methotrexate this week.", "I am resuming your methotrexate this week."),
    ("gerund", "action", "We are tapering your prednisone.", "We are increasing your prednisone."),
    ("gerund", "action", "I recommend lowering the lisinopril dose.", "I recommend raising the lisinopril dose."),
    ("gerund", "action", "We will be decreasing your insulin at night.", "We will be increasing your insulin at night."),
    ("gerund", "action", "I am continuing the ondansetron as needed.", "I am discontinuing the ondansetron."),
    ("gerund", "action", "Please consider reducing the gabapentin.", "Please consider doubling the gabapentin."),
    ("gerund", P, "I recommend increasing the omeprazole dose.", "Please raise the omeprazole dose."),
    ("gerund", P, "We are reducing your amlodipine.", "We will lower your amlodipine."),
    ("gerund", P, "We are discontinuing the sertraline.", "Please stop the sertraline."),
    # Actions bound to their drug: the same action and drug sets, other pairings.
    ("binding", "action", "Keep taking the lisinopril and the aspirin.", "Keep taking the lisinopril but stop the aspirin."),
    ("binding", "action", "Continue the metformin and the glipizide as before.", "Continue the metformin as before, but consider stopping the glipizide."),
    ("binding", "action", "Stop the ibuprofen and keep taking the acetaminophen.", "Keep taking the ibuprofen and stop the acetaminophen."),
    ("binding", "action", "Take acetaminophen instead of ibuprofen for the pain.", "Take ibuprofen instead of acetaminophen for the pain."),
    ("binding", "action", "Hold the warfarin tonight but continue the metoprolol.", "Continue the warfarin tonight but hold the metoprolol."),
    ("binding", "action", "Start the losartan and stop the lisinopril on the same day.", "Start the lisinopril and stop the losartan on the same day."),
    ("binding", "action", "You can stop the prednisone but keep using the albuterol.", "You can keep using the prednisone but stop the albuterol."),
    ("binding", "action", "Increase the furosemide and continue the spironolactone.", "Continue the furosemide and increase the spironolactone."),
    ("binding", "action", "Continue your atorvastatin, metformin and amlodipine, and stop the naproxen.", "Continue your atorvastatin, metformin and naproxen, and stop the amlodipine."),
    ("binding", "action", "Restart the apixaban tomorrow and hold the clopidogrel for a week.", "Hold the apixaban for a week and restart the clopidogrel tomorrow."),
    ("binding", P, "Keep taking the lisinopril but stop the aspirin.", "Stop the aspirin and keep taking the lisinopril."),
    ("binding", P, "Take acetaminophen instead of ibuprofen for the pain.", "Use acetaminophen rather than ibuprofen for the pain."),
    ("binding", P, "Start the losartan and stop the lisinopril on the same day.", "Stop the lisinopril the same day you start the losartan."),
    ("binding", P, "Hold the warfarin tonight but continue the metoprolol.", "Keep taking the metoprolol, but hold the warfarin tonight."),
    # List numbering is not a number.
    ("list numbering", P, "3. Call us if the pain gets worse.", "4. Call us if the pain gets worse."),
    ("list numbering", P, "1) Keep taking your lisinopril as directed.", "2) Continue your lisinopril as directed."),
    ("list numbering", P, "2. Take ibuprofen 400 mg with food.", "5. Take 400 mg of ibuprofen with food."),
    ("list numbering", P, "Step 3: Check your blood pressure every morning.", "4. Check your blood pressure each morning."),
]  # fmt: skip


def _draft(scenario: Scenario) -> str:
    return " ".join(text for text, _ in scenario.draft)


def _check(scenario: Scenario) -> None:
    draft = _draft(scenario)
    split = [s.text for s in split_sentences(draft)]
    wanted = [text for text, _ in scenario.draft]
    if split != wanted:
        raise SystemExit(f"{scenario.id}: the splitter reads the draft as {split}, not {wanted}")
    for text, index, kind in scenario.refs:
        if (index is None) != (kind is None):
            raise SystemExit(f"{scenario.id}: {text!r} needs both a draft index and a kind, or neither")


def main() -> None:
    pairs: list[dict[str, object]] = []
    annotations: list[dict[str, object]] = []
    heldout: list[dict[str, object]] = []
    for scenario in SCENARIOS:
        _check(scenario)
        draft = _draft(scenario)
        for number, (text, index, kind) in enumerate(scenario.refs, start=1):
            item_id = f"{scenario.id}-{number}"
            gold = scenario.draft[index][0] if index is not None and kind == P else None
            annotations.append({"id": item_id, "sentence": text, "draft": draft, "gold": gold})
            if index is not None:
                candidate = scenario.draft[index][0]
                pairs.append(
                    {"id": item_id, "reference": text, "candidate": candidate, "match": kind == P, "kind": kind}
                )
        heldout.extend({"text": text, "theme": theme} for text, theme in scenario.draft)
    seen: set[tuple[str, str]] = set()
    for number, (category, kind, reference, candidate) in enumerate(GUARD_ONLY, start=1):
        if (reference, candidate) in seen:
            raise SystemExit(f"guard-only pair {number} is listed twice: {reference!r} / {candidate!r}")
        seen.add((reference, candidate))
        slug = category.replace(" ", "-")
        pairs.append(
            {
                "id": f"g-{slug}-{number}",
                "reference": reference,
                "candidate": candidate,
                "match": kind == P,
                "kind": kind,
                "category": category,
            }
        )
    for name, items in (
        ("guard_pairs.jsonl", pairs),
        ("match_annotations_clinical.jsonl", annotations),
        ("theme_heldout.jsonl", heldout),
    ):
        path = DATA / name
        path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
        print(f"wrote {len(items)} items to {path}")
    kinds: dict[str, int] = {}
    for pair in pairs:
        kinds[str(pair["kind"])] = kinds.get(str(pair["kind"]), 0) + 1
    print("guard pairs by kind:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
