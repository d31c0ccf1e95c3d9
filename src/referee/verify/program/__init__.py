"""The program verifier: stdin/stdout programs (and Python functions) in seven languages.

:class:`ProgramVerifier` judges :attr:`~referee.tasks.kinds.TaskKind.PROGRAM` tasks; the
modules are one step each: :mod:`.answer` (language and code of an answer), :mod:`.spec` (the
task's data), :mod:`.build` (compile once), :mod:`.execute` (run one case, classify the run),
:mod:`.compare` (output against expected, on the host), :mod:`.checker` (special judges),
:mod:`.function_io` (``io == "function"``).
"""

from referee.verify.program.answer import Answer, AnswerError, parse_answer
from referee.verify.program.verifier import VERSION, ProgramVerifier, program_sandbox

__all__ = ["VERSION", "Answer", "AnswerError", "ProgramVerifier", "parse_answer", "program_sandbox"]
