"""The inspector's behaviour, one small controller per panel (TagStudio's qt/controllers).

    hub.py             the shared part: the open store, the person session, who is acting,
                       the task runner and the dialog host. Its one `session_changed`
                       signal carries lock, unlock and a change of person to every
                       controller; `changed` says an action changed the store.
    panel.py           PanelController: clears on `session_changed`, refreshes after
                       `changed` (at once when in view, else when its tab is shown).
    store_lock.py      unlock page, new store, recent stores, lock and idle lock; the only
                       controller that opens or closes a Store.
    recent.py          File › Open recent (missing stores greyed out, tidy the list).
    help.py            Help: the user guide shipped in the package, shortcuts, About.
    people.py          the people list (counts kept current) and opening a person.
    notes.py           the notes table, filters, time travel, detail, edit/scope/delete.
    timeline.py        the timeline tab.
    conversations.py   conversations, transcripts, search, excise, delete a conversation,
                       and "what did the agent see?" on an assistant turn.
    candidates.py      candidate review.
    audience.py        the audience simulator.
    audit.py           the audit log and the integrity check.
    person_actions.py  learn, export, the access report (PDF), erase.
    agents.py          File › Agent settings…: each agent's learning and tools, saved as
                       `engram agents set` saves them, with their history.
    undo.py            Note > Undo: the actor's own last edit, rescope or delete.

Every change is one call into control/ or runtime/ through `Hub.act`, off the UI thread;
every question goes through the dialog host (`gui.prompts`). gui/controller.py builds
them all and links what crosses panels (a provenance link opens a conversation).
"""
