//go:build !integration

package main

// integration: without the build tag, an everyday run plays the classic
// demo alone.
const integration = false
