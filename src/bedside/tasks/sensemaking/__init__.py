"""Mental-health sensemaking by simulation (seed 004: MedAgent and MultiSenseEval)."""
