"""Text: the shared one-line errors, typed text checked before it is kept, control
characters made visible, and counted words."""
