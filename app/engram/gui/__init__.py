"""The desktop inspector (PySide6). Qt is imported here and nowhere else.

Views (panels, dialogs) build widgets; the controller reacts to them and calls control/
and runtime/ off the UI thread through gui.tasks; views refresh from what comes back.
"""
