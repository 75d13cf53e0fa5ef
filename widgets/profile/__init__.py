"""The Profile workspace: the profile table and the step timeline."""
