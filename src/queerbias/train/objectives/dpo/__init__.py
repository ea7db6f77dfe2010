"""`dpo`: preference tuning (TRL's DPOTrainer) on stereotype frames, after BiasDPO (Allam 2024)."""
