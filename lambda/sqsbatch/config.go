package sqsbatch
