"""The Code workspace: the user's program in its editor with its run controls."""
