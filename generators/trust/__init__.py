"""Builders of the `trust` resources (SPECS §1.8): trust sets from rationales, imported sets, embeddings.

Trust sets from people's rationales, the importer for trust sets labelled by people, and the
`trust/embeddings` resource (θ_relate per embedding model)."""
