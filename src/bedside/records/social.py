"""Which recorded conditions are social history (employment, education, housing, ...) rather than problems.

Sources record social circumstances as conditions: Synthea writes its social-needs screening results as
Condition resources ("Full-time employment (finding)", "Has a criminal record (finding)"), and ICD-10 has a
chapter of Z codes for them. A clinician does not read these as the patient's problems, so the chart summary
lists them under a social-history heading of their own, never in the active problem list.

The rule, by code (never by wording, and never by SNOMED's semantic tag alone: "(finding)" also tags clinical
findings such as obesity, prediabetes, chronic pain and drug misuse, which stay problems):

* ICD-10 / ICD-10-CM codes Z55 to Z65, the chapter "persons with potential health hazards related to
  socioeconomic and psychosocial circumstances" (education, employment, housing, social environment, upbringing,
  legal circumstances, ...);
* the SNOMED CT concepts in :data:`SOCIAL_SNOMED`: the social-context findings Synthea's social-determinants
  screening records (employment, education, criminal record, housing and homelessness, transport, social contact
  and isolation, violence in the environment, intimate partner abuse, military service, refugee status, and
  stress as that screening asks about it).

Health behaviours (unhealthy alcohol drinking, drug misuse, risk activity involvement) are not on the list: they
are treated, so they stay problems. Anything not on the list stays a problem (the clinically safe default).
"""

from __future__ import annotations

from bedside.records.model import Code, Condition

SOCIAL_SNOMED: dict[str, str] = {
    "160903007": "Full-time employment",
    "160904001": "Part-time employment",
    "741062008": "Not in labor force",
    "73438004": "Unemployed",
    "224295006": "Only received primary school education",
    "473461003": "Educated to high school level",
    "5251000175109": "Received certificate of high school equivalency",
    "105480006": "Received certificate of high school equivalency",
    "224299000": "Received higher education",
    "266948004": "Has a criminal record",
    "105531004": "Housing unsatisfactory",
    "32911000": "Homeless",
    "713458007": "Lack of access to transportation",
    "266934004": "Transport problem",
    "423315002": "Limited social contact",
    "422650009": "Social isolation",
    "424393004": "Reports of violence in the environment",
    "706893006": "Victim of intimate partner abuse",
    "1187604002": "Serving in military service",
    "446654005": "Refugee",
    "73595000": "Stress",
}
"""SNOMED CT social-context concepts read as social history (code → what it says, for readers of this list)."""

_SNOMED = frozenset({"SNOMED", "SNOMEDCT", "SNOMEDCT_US", "SNOMED CT", "SCT"})
_ICD10 = frozenset({"ICD10", "ICD10CM", "ICD-10", "ICD-10-CM"})


def is_social_code(code: Code) -> bool:
    """Whether ``code`` names a social circumstance under the module's rule."""
    system = code.system.upper()
    if system in _SNOMED:
        return code.code.strip() in SOCIAL_SNOMED
    if system in _ICD10:
        text = code.code.strip().upper().replace(".", "")
        return len(text) >= 3 and text[0] == "Z" and text[1:3].isdigit() and 55 <= int(text[1:3]) <= 65
    return False


def is_social_history(condition: Condition) -> bool:
    """Whether ``condition`` is social history: any of its codes is a social one."""
    return any(is_social_code(code) for code in condition.codes)
