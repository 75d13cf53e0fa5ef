"""The Code workspace: your own program in the editor, its files and its draft."""
