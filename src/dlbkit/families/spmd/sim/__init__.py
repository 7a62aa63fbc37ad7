"""The spmd family's sim: its pipelined-SPMD engine, its platform run and its sweep."""
