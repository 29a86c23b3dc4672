"""The policy's JSON schema, generated from the model so that the two cannot drift."""

from __future__ import annotations

import datetime
import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from loadaware.policy import _duration, _model

SCHEMA_ID = "https://loadaware.io/schemas/v1alpha1/policy.json"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _PolicySchemaGenerator(GenerateJsonSchema):
    def encode_default(self, dft: Any) -> Any:
        # pydantic writes a bare timedelta default as ISO 8601 ("PT2M"), which the
        # field's own pattern rejects; write it as a file would spell it.
        if isinstance(dft, datetime.timedelta):
            return _duration.format_duration(dft)
        return super().encode_default(dft)

    def field_title_should_be_set(self, schema: Any) -> bool:
        # Titles derived from snake_case names ("Nodefit") add noise to editor
        # tooltips; the property name already says it.
        return False


def policy_json_schema() -> dict[str, Any]:
    """JSON schema (draft 2020-12) of a policy file: camelCase names, input form."""
    schema = _model.LoadAwarePolicy.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_PolicySchemaGenerator
    )
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        **schema,
        "title": "loadaware LoadAwarePolicy (loadaware.io/v1alpha1)",
        "description": (
            "Policy file of loadaware, a load-aware rebalancer for Kubernetes. "
            "Durations are Kubernetes-style (90s, 10m, 1h30m); percentages are 0-100."
        ),
    }


def render_policy_json_schema() -> str:
    """The schema as committed in policy/schema.json: 2-space indent, sorted keys."""
    return json.dumps(policy_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
