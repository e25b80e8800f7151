// Package cacheread reads the objects a manager's informer cache holds in place, without
// copying them into a list first: a kind of thousands is read often (a class's fleet, a
// metrics scrape), and a typed List copies every object it returns.
package cacheread
