"""A maintainer's correction applied to a stored triage, so the comment and the labels show the
corrected answer (the footer invites corrections; recording them only as feedback left the old
answer visible). Pure.

The taxonomy is a hierarchy: a symptom and a root cause belong to one stage. A corrected stage
therefore drops a symptom or root cause of another stage (to ``unknown``, abstained), and a
corrected symptom or root cause brings its own stage along."""
from __future__ import annotations

from triagebot.domain import taxonomy
from triagebot.domain.models import Prediction, Triage

SET_BY_MAINTAINER = "set by a maintainer"
IMPLIED = "implied by a maintainer's correction"
CORRECTABLE = taxonomy.ALL_DIMENSIONS
_FLAG_NAMES = {"yes": "Yes", "no": "No"}
_UNKNOWN = Prediction(id=taxonomy.UNKNOWN, name="Unknown", confidence=0.0, abstained=True)


def apply_correction(triage: Triage, dimension: str, new_id: str | None) -> Triage:
    """``triage`` with ``dimension`` set to ``new_id`` (certain) and the hierarchy kept consistent;
    unchanged when the dimension or id is not one a maintainer can set."""
    if not _settable(dimension, new_id):
        return triage
    assert new_id is not None
    update = {dimension: _certain(dimension, new_id, SET_BY_MAINTAINER)}
    if dimension in taxonomy.IN_STAGE:
        stage = taxonomy.stage_of(dimension, new_id)
        if stage and stage != triage.stage.id:
            update["stage"] = _certain("stage", stage, IMPLIED)
    fixed = triage.model_copy(update=update)
    return _drop_other_stages(fixed, keep=dimension)


def _settable(dimension: str, new_id: str | None) -> bool:
    if dimension in taxonomy.FLAGS:
        return new_id in _FLAG_NAMES
    return dimension in CORRECTABLE and bool(new_id) and taxonomy.is_valid(dimension, new_id or "")


def _certain(dimension: str, label_id: str, why: str) -> Prediction:
    name = _FLAG_NAMES.get(label_id, label_id) if dimension in taxonomy.FLAGS \
        else taxonomy.name(dimension, label_id)
    return Prediction(id=label_id, name=name, confidence=1.0, abstained=False, evidence=[why])


def _drop_other_stages(triage: Triage, keep: str) -> Triage:
    """Symptom/root cause outside the (possibly new) stage become unknown, except ``keep``."""
    update = {}
    for dim in taxonomy.IN_STAGE:
        owner = taxonomy.stage_of(dim, triage.prediction(dim).id)
        if dim != keep and owner is not None and owner != triage.stage.id:
            update[dim] = _UNKNOWN
    return triage.model_copy(update=update) if update else triage
