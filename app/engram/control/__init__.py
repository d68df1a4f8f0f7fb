"""The inspector's operations, bound to one resolved person (C1); forensics and erasure."""
