module hetgpu.io/extender-client

go 1.19
