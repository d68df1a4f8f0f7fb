"""The encrypted, append-only store: schema, crypto, keys, journals, logs, verify, erase.

SQLAlchemy is imported here and nowhere else.

Its modules read top-down, with no import cycle and no import inside a function
(tests/unit/test_store_layers.py), from the bottom up:

- contexts (every encryption context), crypto, schema, dialect, chain, ledger, checkpoint…
- data_keys (the `DataKeys` an open store owns) and write_txn (`WriteTxn`, its hooks)
- unlocked (`UnlockedStore`: an open store held — keys, signing, transactions, checkpoint)
- erasure_marks (a write that erases hooks its mark into the write path) and
  pending_erasure (finishing an erasure: the files proven free of its bytes)
- store (`Store`: creating and opening one, which finishes what an erasure left pending)
- pseudonyms, journal, conversation_log, erasure_admin, erasure, checkpoint_check, verify
"""
