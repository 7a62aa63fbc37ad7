"""The stream family's sim: its event engine on the kernel (FIFO or processor sharing) and its fast path."""
