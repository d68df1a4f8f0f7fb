"""Pure logic over events: fold, scope, ranking, assembly, recall. No I/O here."""
