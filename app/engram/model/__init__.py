"""Value types shared by every layer: ids, scopes, kinds, events, notes, audience, clock."""
