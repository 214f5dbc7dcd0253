"""Judging: the one verdict rule and everything that answers a question with it.

The pair rule (decisions), the home page's question families and looks (verdict_engine,
sequential, noise_floor), what evidence can show (conditions, regime, seeds, targets,
clusters), the answers of their own (defaults_accuracy, precision_accuracy, parity,
same_start, model_answers, where_it_holds), comparisons of result sets (compare,
compare_kinds), the describing statistics they rest on (stats, summaries), and the one
outcome vocabulary every judge speaks (outcomes)."""
