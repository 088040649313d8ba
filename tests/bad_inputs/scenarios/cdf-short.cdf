# a CDF that stops at 0.9
1 1 0.0
10 1 0.5
20 1 0.9
