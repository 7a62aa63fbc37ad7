"""The divisible family's sim: its master–worker engine (self-scheduling or rounds) and the shared predictor of ``auto``."""
