"""Discharge education by simulation (seed 002, DischargeSim): cases, profiles, the doctor and patient agents on
``bedside.sim``, the documents, the comprehension exam, scoring and report tables."""
