module github.com/lanleader/lanleader

go 1.26.0

require (
	github.com/hashicorp/go-sockaddr v1.0.7 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
