"""The papers the tracks and metrics implement, written once (issue #31): each is a short citation —
authors, year, title, and a link — that a track's or metric's `reference` names and the site shows.

Every track and metric must carry a non-empty `reference` (checked where it is declared:
`benchmark.tracks.base.TrackMetadata`, `benchmark.metrics.base.Metric`); the files of the papers the
benchmark follows are in the project's shared papers folder (SPECS names them)."""

AIXI = ("Miró-Nicolau, Jaume-i-Capó & Moyà-Alcover 2023, A novel approach to generate datasets with XAI "
        "ground truth to evaluate image models, https://arxiv.org/abs/2302.05624")
CLEVR_XAI = ("Arras, Osman & Samek 2022, CLEVR-XAI: a benchmark dataset for the ground truth evaluation of "
             "neural network explanations, Information Fusion 81, "
             "https://doi.org/10.1016/j.inffus.2021.11.008")
BYLINSKII = ("Bylinskii et al. 2019, What do different evaluation metrics tell us about saliency models?, "
             "IEEE TPAMI, https://arxiv.org/abs/1604.03605")
CAMBURU = ("Camburu et al. 2019, Can I trust the explainer? Verifying post-hoc explanatory methods, "
           "https://arxiv.org/abs/1910.02065")
LEI = ("Lei, Barzilay & Jaakkola 2016, Rationalizing Neural Predictions, EMNLP, "
       "https://arxiv.org/abs/1606.04155")
IDC = ("Khaleel et al. 2022, IDC: quantitative evaluation benchmark of interpretation methods for deep text "
       "classification models, Journal of Big Data 9:34, https://doi.org/10.1186/s40537-022-00583-6")
TOKI = ("Nguyen Tung et al. 2025, Automated Trustworthiness Oracle Generation for Machine Learning Text "
        "Classifiers (FSE 2025), https://arxiv.org/abs/2410.22663")
TEF = ("Ivankay, Girardi, Marchiori & Frossard 2022, Fooling Explanations in Text Classifiers, ICLR 2022, "
       "https://openreview.net/forum?id=j3krplz_4w6")
ERASER = ("DeYoung et al. 2020, ERASER: A Benchmark to Evaluate Rationalized NLP Models, ACL 2020, "
          "https://arxiv.org/abs/1911.03429")
