"""Written by packaging/cli_files.py from the parser: do not edit. `engram --help`
lays it out (cli/quick_help.py) as argparse would under this Python."""

PYTHON: tuple[int, int] = (3, 11)
PREFIX = 'usage: '
PROG = 'engram'
USAGE = 'engram [-h] [--version] [--store STORE] [--passphrase-env VAR] [--passphrase-file FILE] [--passphrase-fd N] [--actor ACTOR] COMMAND ...'
OPT_PARTS: tuple[str, ...] = ('[-h]', '[--version]', '[--store STORE]', '[--passphrase-env VAR]', '[--passphrase-file FILE]', '[--passphrase-fd N]', '[--actor ACTOR]')
POS_PARTS: tuple[str, ...] = ('COMMAND', '...')
DESCRIPTION: tuple[str, ...] | None = ('See', ' ', 'and', ' ', 'control', ' ', 'what', ' ', 'an', ' ', 'AI', ' ', 'agent', ' ', 'remembers', ' ', 'about', ' ', 'a', ' ', 'person.')
ACTION_MAX_LENGTH = 24
SECTIONS: tuple[tuple[str, tuple[tuple[str, int, tuple[str, ...] | None], ...]], ...] = (
    ('positional arguments', (
        ('COMMAND', 0, None),
        ('init', 1, ('create', ' ', 'a', ' ', 'new', ' ', 'store')),
        ('demo', 1, ('build', ' ', 'a', ' ', 'realistic', ' ', 'demo', ' ', 'store', ' ', 'through', ' ', 'the', ' ', 'real', ' ', 'runtime', ' ', '(default:', ' ', 'demo.engram', ' ', 'in', ' ', 'the', ' ', 'user', ' ', 'data', ' ', 'folder,', ' ', 'never', ' ', 'the', ' ', 'default', ' ', 'store;', ' ', 'passphrase', ' ', "'demo'", ' ', 'unless', ' ', 'one', ' ', 'is', ' ', 'given)')),
        ('verify', 1, ('check', ' ', 'every', ' ', 'chain,', ' ', 'signature', ' ', 'and', ' ', 'the', ' ', 'checkpoint')),
        ('persons', 1, ('list', ' ', 'the', ' ', 'people', ' ', 'in', ' ', 'the', ' ', 'store')),
        ('export', 1, ('everything', ' ', 'kept', ' ', 'about', ' ', 'a', ' ', 'person,', ' ', 'as', ' ', 'JSON,', ' ', 'recorded', ' ', 'in', ' ', 'their', ' ', 'audit', ' ', 'log')),
        ('audit', 1, ('a', ' ', "person's", ' ', 'journal', ' ', 'as', ' ', 'a', ' ', 'readable', ' ', 'log,', ' ', 'filtered,', ' ', 'streamed', ' ', 'as', ' ', 'it', ' ', 'is', ' ', 'read')),
        ('import', 1, ('import', ' ', 'conversations', ' ', 'from', ' ', 'a', ' ', 'JSONL', ' ', 'transcript')),
        ('person', 1, ('act', ' ', 'on', ' ', 'a', ' ', 'whole', ' ', 'person')),
        ('checkpoint', 1, ('the', ' ', 'signed', ' ', 'checkpoint', ' ', 'that', ' ', 'catches', ' ', 'an', ' ', 'older', ' ', 'copy', ' ', 'put', ' ', 'back')),
        ('desk', 1, ('open', ' ', 'the', ' ', 'desktop', ' ', 'inspector')),
        ('backup', 1, ('write', ' ', 'a', ' ', 'consistent', ' ', 'copy', ' ', 'of', ' ', 'the', ' ', 'store', ' ', 'and', ' ', 'its', ' ', 'checkpoint,', ' ', 'readable', ' ', 'by', ' ', 'you', ' ', 'only,', ' ', 'while', ' ', 'it', ' ', 'stays', ' ', 'in', ' ', 'use')),
        ('restore', 1, ('put', ' ', 'a', ' ', 'backup', ' ', 'back', ' ', 'as', ' ', 'the', ' ', 'store', ' ', 'at', ' ', '--to,', ' ', 'checked', ' ', 'first', ' ', 'and', ' ', 're-', 'anchored', ' ', '(recorded', ' ', 'in', ' ', 'the', ' ', "store's", ' ', 'signed', ' ', 'record)')),
        ('notes', 1, ('a', ' ', "person's", ' ', 'notes')),
        ('conversation', 1, ('one', ' ', 'conversation')),
        ('conversations', 1, ('a', ' ', "person's", ' ', 'conversations')),
        ('assemble', 1, ('the', ' ', 'memory', ' ', 'block', ' ', 'the', ' ', "agent's", ' ', 'next', ' ', 'turn', ' ', 'here', ' ', 'would', ' ', 'get')),
        ('recall', 1, ('the', ' ', 'notes', ' ', 'the', ' ', "agent's", ' ', 'recall', ' ', 'tool', ' ', 'would', ' ', 'get', ' ', 'here')),
        ('agents', 1, ('each', ' ', "agent's", ' ', 'memory', ' ', 'settings')),
        ('learn', 1, ('learn', ' ', 'notes', ' ', 'now', ' ', 'from', ' ', 'turns', ' ', 'not', ' ', 'analysed', ' ', 'yet')),
        ('maintain', 1, ('retire', ' ', 'expired', ' ', 'notes,', ' ', 'remove', ' ', 'duplicates,', ' ', 'rebuild', ' ', 'each', ' ', "person's", ' ', 'profile')),
        ('candidates', 1, ('review', ' ', 'the', ' ', 'notes', ' ', 'learning', ' ', 'suggested')),
        ('serve', 1, ('the', ' ', 'typed', ' ', 'memory', ' ', 'API', ' ', 'over', ' ', 'HTTP', ' ', '(loopback', ' ', 'by', ' ', 'default)')),
        ('keys', 1, ('project', ' ', 'API', ' ', 'keys', ' ', 'for', ' ', '`engram', ' ', 'serve`')),
        ('mcp', 1, ('the', ' ', "agent's", ' ', 'tools', ' ', 'for', ' ', 'an', ' ', 'MCP', ' ', 'client', ' ', '(stdio,', ' ', 'or', ' ', 'Streamable', ' ', 'HTTP)')),
        ('review', 1, ('a', ' ', 'review', ' ', 'copy', ' ', 'of', ' ', 'one', ' ', 'person,', ' ', 'for', ' ', 'an', ' ', 'offline', ' ', 'reviewer,', ' ', 'and', ' ', 'its', ' ', 'return')),
        ('passphrase', 1, ('the', ' ', 'passphrase', ' ', 'that', ' ', 'opens', ' ', 'the', ' ', 'store')),
        ('keyring', 1, ('the', ' ', "store's", ' ', 'key', ' ', 'in', ' ', 'this', ' ', "computer's", ' ', 'OS', ' ', 'keyring')),
        ('report', 1, ('a', ' ', "person's", ' ', 'access', ' ', 'report:', ' ', 'a', ' ', 'signed', ' ', 'PDF', ' ', 'of', ' ', 'everything', ' ', 'kept', ' ', 'about', ' ', 'them,', ' ', 'recorded', ' ', 'in', ' ', 'their', ' ', 'audit', ' ', 'log')),
        ('verify-report', 1, ('say', ' ', 'whether', ' ', 'an', ' ', 'access', ' ', 'report', ' ', 'came', ' ', 'from', ' ', 'this', ' ', 'store', ' ', 'unaltered', ' ', '(exit', ' ', '0', ' ', 'only', ' ', 'then)')),
    )),
    ('options', (
        ('-h, --help', 0, ('show', ' ', 'this', ' ', 'help', ' ', 'message', ' ', 'and', ' ', 'exit')),
        ('--version', 0, ('show', ' ', "program's", ' ', 'version', ' ', 'number', ' ', 'and', ' ', 'exit')),
        ('--store STORE', 0, ('store', ' ', 'path', ' ', 'or', ' ', 'SQLAlchemy', ' ', 'URL', ' ', '(default:', ' ', 'ENGRAM_STORE', ' ', 'or', ' ', 'the', ' ', 'user', ' ', 'data', ' ', 'folder)')),
        ('--passphrase-env VAR', 0, ('read', ' ', 'the', ' ', 'store', ' ', 'passphrase', ' ', 'from', ' ', 'this', ' ', 'environment', ' ', 'variable', ' ', 'instead', ' ', 'of', ' ', 'the', ' ', 'keyring')),
        ('--passphrase-file FILE', 0, ('read', ' ', 'the', ' ', 'store', ' ', 'passphrase', ' ', 'from', ' ', 'the', ' ', 'first', ' ', 'line', ' ', 'of', ' ', 'this', ' ', 'file', ' ', '(for', ' ', 'scripts)')),
        ('--passphrase-fd N', 0, ('read', ' ', 'the', ' ', 'store', ' ', 'passphrase', ' ', 'from', ' ', 'the', ' ', 'first', ' ', 'line', ' ', 'of', ' ', 'this', ' ', 'open', ' ', 'file', ' ', 'descriptor')),
        ('--actor ACTOR', 0, ('who', ' ', 'is', ' ', 'acting,', ' ', 'recorded', ' ', 'on', ' ', 'every', ' ', 'change', ' ', '(e.g.', ' ', 'staff:dana);', ' ', 'default:', ' ', 'the', ' ', 'person', ' ', 'themself')),
    )),
)
