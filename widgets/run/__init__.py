"""The Run workspace: model picker, generation form, prompt editor, token stream and its live figures."""
