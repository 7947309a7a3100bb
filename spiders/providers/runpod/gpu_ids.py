"""Runpod's GPU ids by the names its pricing page prints.

The GraphQL API names a GPU type by its `id` ("NVIDIA H100 80GB HBM3") and a short
`displayName` ("H100 SXM"); the 2025 Webflow page and the 2026 JSON-LD print only a short
name. The parser gives page rows the API's id as their SKU, so that a page row and an API row
for the same GPU and cloud are one offer (warehouse/identity.py: the SKU is an identity
column) and their prices one history.

DISPLAY_NAME_TO_ID is read off the ~2026-09-29 API capture
(tests/fixtures/raw/runpod/runpod_graphql_gpuTypes_ewyluda_fixture.json, `displayName` ->
`id`, all 47 real types); the ~2026-08-25 capture (cgi_runpod_gputypes.json) agrees on the 9
it holds. PAGE_ALIASES are the page names that are no `displayName`, each with the evidence
that it is that type.
"""

from __future__ import annotations

DISPLAY_NAME_TO_ID = {
    "MI300X": "AMD Instinct MI300X OAM",
    "A100 PCIe": "NVIDIA A100 80GB PCIe",
    "A100 SXM 40GB": "NVIDIA A100-SXM4-40GB",
    "A100 SXM": "NVIDIA A100-SXM4-80GB",
    "A40": "NVIDIA A40",
    "B200": "NVIDIA B200",
    "B300": "NVIDIA B300 SXM6 AC",
    "RTX 3070": "NVIDIA GeForce RTX 3070",
    "RTX 3080": "NVIDIA GeForce RTX 3080",
    "RTX 3080 Ti": "NVIDIA GeForce RTX 3080 Ti",
    "RTX 3090": "NVIDIA GeForce RTX 3090",
    "RTX 3090 Ti": "NVIDIA GeForce RTX 3090 Ti",
    "RTX 4070 Ti": "NVIDIA GeForce RTX 4070 Ti",
    "RTX 4080": "NVIDIA GeForce RTX 4080",
    "RTX 4080 SUPER": "NVIDIA GeForce RTX 4080 SUPER",
    "RTX 4090": "NVIDIA GeForce RTX 4090",
    "RTX 5080": "NVIDIA GeForce RTX 5080",
    "RTX 5090": "NVIDIA GeForce RTX 5090",
    "H100 SXM": "NVIDIA H100 80GB HBM3",
    "H100 NVL": "NVIDIA H100 NVL",
    "H100 PCIe": "NVIDIA H100 PCIe",
    "H200 SXM": "NVIDIA H200",
    "H200 NVL": "NVIDIA H200 NVL",
    "L4": "NVIDIA L4",
    "L40": "NVIDIA L40",
    "L40S": "NVIDIA L40S",
    "RTX 2000 Ada": "NVIDIA RTX 2000 Ada Generation",
    "RTX 4000 Ada": "NVIDIA RTX 4000 Ada Generation",
    "RTX 4000 Ada SFF": "NVIDIA RTX 4000 SFF Ada Generation",
    "RTX 5000 Ada": "NVIDIA RTX 5000 Ada Generation",
    "RTX 6000 Ada": "NVIDIA RTX 6000 Ada Generation",
    "RTX A2000": "NVIDIA RTX A2000",
    "RTX A4000": "NVIDIA RTX A4000",
    "RTX A4500": "NVIDIA RTX A4500",
    "RTX A5000": "NVIDIA RTX A5000",
    "RTX A6000": "NVIDIA RTX A6000",
    "RTX PRO 4000": "NVIDIA RTX PRO 4000 Blackwell",
    "RTX PRO 4500": "NVIDIA RTX PRO 4500 Blackwell",
    "RTX PRO 4500 SE": "NVIDIA RTX PRO 4500 Blackwell Server Edition",
    "RTX PRO 5000": "NVIDIA RTX PRO 5000 Blackwell",
    "RTX PRO 6000 MaxQ": "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "RTX PRO 6000": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "PRO 6000 MIG 24GB": "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb",
    "PRO 6000 MIG 48GB": "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb",
    "RTX PRO 6000 WK": "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
    "Tesla V100": "Tesla V100-PCIE-16GB",
    "V100 SXM2": "Tesla V100-SXM2-16GB",
}

# Page names that are no displayName. "H200" (2025-09-09 and 2026-08-10 pages): 141 GB VRAM on
# the 2025 row, community 3.59 on both pages = the API's "H200 SXM" community 3.59 (08-25 and
# 09-29 captures); the API's other H200, "H200 NVL", has 143 GB. ("RTX Pro 6000" is the
# displayName "RTX PRO 6000" in another case: names are compared without case.)
PAGE_ALIASES = {"H200": "H200 SXM"}

_BY_NAME = {name.lower(): gpu_id for name, gpu_id in DISPLAY_NAME_TO_ID.items()}
_BY_NAME.update({alias.lower(): DISPLAY_NAME_TO_ID[name] for alias, name in PAGE_ALIASES.items()})


def api_gpu_id(page_name: str) -> str | None:
    """The API's GPU id for a name the pricing page prints, or None when the name is unknown
    (the row then keeps the page's name as its SKU: a new GPU is not guessed)."""
    return _BY_NAME.get(" ".join(page_name.split()).lower())
