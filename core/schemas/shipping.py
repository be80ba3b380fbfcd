"""Where audit records are shipped: one ``ShipDestination`` per SIEM endpoint (issue 14 item 2).

Given in settings as a JSON list (``WB_AUDIT_SHIP_DESTINATIONS``); README 「監査ログの SIEM 転送」
has a Splunk HEC and an Elastic example. Kinds:

- ``syslog``: RFC 5424 over TCP with octet-counting framing (RFC 6587), optionally TLS;
- ``splunk_hec``: Splunk HTTP Event Collector (``/services/collector/event``, ``Splunk`` token);
- ``elastic_bulk``: Elasticsearch ``_bulk`` with ``create`` and the record hash as ``_id``;
- ``webhook``: a generic JSON POST (``{"records": [...]}``) with an ``Idempotency-Key`` header.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

ShipKind = Literal["syslog", "splunk_hec", "elastic_bulk", "webhook"]
HTTP_KINDS = ("splunk_hec", "elastic_bulk", "webhook")


class ShipDestination(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Names the offset file.")
    kind: ShipKind
    url: str | None = Field(default=None, description="HTTP(S) endpoint (splunk/elastic/webhook).")
    host: str | None = Field(default=None, description="syslog host")
    port: int | None = Field(default=None, ge=1, le=65535, description="syslog port")
    tls: bool = Field(default=False, description="syslog over TLS (ssl, certificate verified)")
    ca_file: Path | None = Field(default=None, description="CA bundle for TLS / HTTPS")
    token: SecretStr | None = Field(
        default=None, description="Splunk HEC token, Elastic API key, or webhook bearer token"
    )
    index: str | None = Field(default=None, description="Elastic index (required) / Splunk index")
    sourcetype: str = "_json"
    headers: dict[str, str] = Field(default_factory=dict)
    batch_size: int = Field(default=200, ge=1, le=5000)
    timeout_sec: float = Field(default=10.0, gt=0, le=300)
    app_name: str = Field(default="soc-workbench", pattern=r"^[!-~]{1,48}$")
    facility: int = Field(default=13, ge=0, le=23, description="13: log audit")
    confirm_close: bool = Field(
        default=True,
        description=(
            "syslog: after a batch, half-close and wait for the receiver to close, so that a "
            "batch counts as delivered only once the receiver has read all of it."
        ),
    )

    @model_validator(mode="after")
    def _complete(self) -> ShipDestination:
        if self.kind == "syslog":
            if not self.host or not self.port:
                raise ValueError(f"送信先 {self.name}: syslog には host と port が必要です。")
        else:
            if not self.url or not self.url.startswith(("http://", "https://")):
                raise ValueError(f"送信先 {self.name}: url（http:// か https://）が必要です。")
            if self.kind == "elastic_bulk" and not self.index:
                raise ValueError(f"送信先 {self.name}: elastic_bulk には index が必要です。")
        return self

    def label(self) -> str:
        """How messages name the destination: 「name」（kind → where）."""
        where = f"{self.host}:{self.port}" if self.kind == "syslog" else self.url
        return f"「{self.name}」（{self.kind} → {where}）"
