"""The graph family's sim: its static-plan engine and its dynamic engine (online mappers, changing availability)."""
