"""The lessons, one data module each: course/lessons/<id>.py defines LESSON (its sections, steps,
hints and note).  course/registry.py imports every such module and lists the lessons in id order.
A lesson's other modules here are named <id>_<what>.py (t5_probes.py) and are imported only by
what uses them."""
