"""Tasks: the task model, pools and sources. So far: the HumanEval source (see ``humaneval``)."""
