module receiver

go 1.19
