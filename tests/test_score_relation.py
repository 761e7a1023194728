"""The relation check's reading of questions (which relation is asked) and of replies (which clauses go)."""

from __future__ import annotations

import pytest

from perspecta.score.relation import asked_pole, filter_relations


@pytest.mark.parametrize(("question", "pole"), [
    ("<image>\nFrom the viewer's perspective, which object is on the left?\nA. cylinder\nB. box", "left"),
    ("From the viewer's perspective, which of the two objects is further back in the scene?", "behind"),
    ("From the viewer's perspective, which of the two objects appears further to the right in the image?", "right"),
    ("From the viewer's perspective, which of the two objects is nearer to the camera?", "closer"),
    ("In the front view, the box is on the left and the ball is on the right. Now imagine viewing the scene from "
     "the back: which object appears on the left from the new viewpoint?", "left"),
    ("Which is farther from you: the sink or the washing machine?", "farther"),
    ("In the actual room, which object is closest to the box?", "closer"),
    # no relation of objects asked: the check stays off
    ("Is the lamp closer to or farther from the viewer than the box?", None),
    ("Start at the fridge. Which object do you end at?", None),
    ("TASK: Decide which way the front of Object A faces with respect to the camera.", None),
])
def test_asked_pole(question: str, pole: str | None) -> None:
    assert asked_pole(question) == pole


def test_filter_drops_other_relations_and_landmarks_keeps_tags() -> None:
    q, names = "Which object is on the left?", ("cylinder", "teddy bear")
    assert "cylinder" not in filter_relations("The cylinder is on the right.", q, names)
    out = filter_relations("The teddy bear is to the left of the cylinder.", q, names)
    assert "teddy bear" in out and "cylinder" not in out
    out = filter_relations("<answer>teddy bear</answer> (the cylinder is on the right)", q, names)
    assert out.startswith("<answer>teddy bear</answer>") and "cylinder" not in out
    assert filter_relations("The cylinder is on the right.", "Which object is red?", names) == \
        "The cylinder is on the right."  # nothing asked, nothing dropped
    # options that are themselves relations are the answer words, never dropped
    assert filter_relations("It is on the right.", q, ("left", "right")) == "It is on the right."
