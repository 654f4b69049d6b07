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
# Ground-truth-free evaluation metrics (benchmark.gtfree, leaderboard.metric_board)
SAMEK_AOPC = ("Samek, Binder, Montavon, Lapuschkin & Müller 2017, Evaluating the visualization of what a deep "
              "neural network has learned, IEEE TNNLS 28(11), https://doi.org/10.1109/TNNLS.2016.2599820")
RISE = ("Petsiuk, Das & Saenko 2018, RISE: Randomized Input Sampling for Explanation of Black-box Models, "
        "BMVC 2018, https://arxiv.org/abs/1806.07421")
BHATT = ("Bhatt, Weller & Moura 2020, Evaluating and Aggregating Feature-based Model Explanations, IJCAI 2020, "
         "https://arxiv.org/abs/2005.00631")
BACH = ("Bach et al. 2015, On Pixel-Wise Explanations for Non-Linear Classifier Decisions by Layer-Wise "
        "Relevance Propagation, PLoS ONE 10(7), https://doi.org/10.1371/journal.pone.0130140")
YEH = ("Yeh, Hsieh, Suggala, Inouye & Ravikumar 2019, On the (In)fidelity and Sensitivity of Explanations, "
       "NeurIPS 2019, https://arxiv.org/abs/1901.09392")
ROAD = ("Rong, Leemann, Borisov, Kasneci & Kasneci 2022, A Consistent and Efficient Evaluation Strategy for "
        "Attribution Methods, ICML 2022, https://arxiv.org/abs/2202.00449")
CHALASANI = ("Chalasani, Chen, Chowdhury, Wu & Jha 2020, Concise Explanations of Neural Networks using "
             "Adversarial Training, ICML 2020, https://arxiv.org/abs/1810.06583")
QUANTUS = ("Hedström et al. 2023, Quantus: An Explainable AI Toolkit for Responsible Evaluation of Neural "
           "Network Explanations and Beyond, JMLR 24(34), https://jmlr.org/papers/v24/22-0142.html")
METAQUANTUS = ("Hedström et al. 2023, The Meta-Evaluation Problem in Explainable AI: Identifying Reliable "
               "Estimators with MetaQuantus, TMLR, https://openreview.net/forum?id=j3FK00HyfU")
ADEBAYO = ("Adebayo et al. 2018, Sanity Checks for Saliency Maps, NeurIPS 2018, https://arxiv.org/abs/1810.03292")
