"""Word-substitution attacks on text models and their explanations (SPECS §2, §1.9).

* `tef` — the explanation attack of the robustness track (TEF and its RA / RI / RS ablations, SPECS §2.4);
* `a2t` — the A2T prediction attack (Yoo & Qi 2021) and TOKI's candidate rule;
* `filters` — stop-word and part-of-speech candidate filters; `synonyms` — the synonym space;
* `live` — attacks run on a submission's explainer in its worker (`xaibench attack`).
"""
