"""The weekly markdown report: its assembly (report) and its week-over-week section (changes)."""
