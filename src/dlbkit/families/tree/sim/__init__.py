"""The tree family's sim: its asynchronous engine on the kernel and the superstep (Cray T3D) engine."""
