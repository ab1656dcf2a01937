module github.com/valllabh/ocsf-schema-golang

go 1.22
