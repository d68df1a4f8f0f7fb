"""The HTTP face (`engram serve`): the typed memory API over the same control paths."""
