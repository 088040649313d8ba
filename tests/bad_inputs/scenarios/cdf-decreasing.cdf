# a CDF whose probabilities go down
1 1 0.0
10 1 0.6
20 1 0.4
30 1 1.0
