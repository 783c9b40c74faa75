"""The runner: call models over a case set (arms x repeats), record every attempt, resume."""
