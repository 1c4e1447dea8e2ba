"""Training: SFT and GRPO on whole episodes, the single-turn TRL pipeline, PPO runs, curves."""
