"""The bags family's face: its declaration (registered), its plots and its real-run entry."""
