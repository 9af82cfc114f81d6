module github.com/licensing-service/licensing/packages/go

go 1.19
