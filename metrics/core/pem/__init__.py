"""PEM: the paraphrase evaluation metric of Liu, Dahlmeier & Ng (2010, §4.5, §6).

PEM maps three automatic features of a pair (original R, paraphrase P)

* pivot-language F1 (adequacy; :mod:`metrics.core.pivot`, §4.3),
* normalised LM score Pn = log Pr(P) / length(P) (fluency; :mod:`metrics.core.lm`, §4.4),
* target-language F1 (dissimilarity; :mod:`metrics.core.target_f1`, §4.4)

to the human overall score with support-vector regression with the RBF kernel
K(x_i, x_j) = exp(−γ ‖x_i − x_j‖²). The paper trains SVM-light on the pairs of
the first 200 originals and tests on the other 100 (§6.1), so training and test
never share an original. Here: scikit-learn's ``SVR`` behind a
``StandardScaler`` (the three features live on very different scales; the paper
does not say how it scaled them), C, γ and ε chosen by grouped cross-validation
on the training originals (``GroupKFold`` in ``GridSearchCV``, mean squared
error), and a held-out test set of whole originals on which the Pearson
correlation is reported. SVM-light's own defaults are not reproduced.

Layout
------
:mod:`.model` holds the trained regressor (:class:`RbfSvr`, :class:`PemModel`)
with the feature columns (:data:`FEATURES`) and their check, and its data-only file
format; :mod:`.training` splits by original and trains (:func:`pem_train`);
:mod:`.metric` computes the three features (:func:`pem_features`) and registers ``pem``. Import each name from the module that defines it; this package holds no names of its own.
A test that lowers :data:`PEM_MAX_BYTES` patches it where the reader looks it up,
``metrics.core.pem.model``.
"""
