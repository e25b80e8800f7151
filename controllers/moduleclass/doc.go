// Package moduleclass checks every ModuleClass against its module: it lists the module's
// variables and outputs in status and sets Ready=False, with every problem named, when
// the class's inputs, fixed values or connection mapping do not fit. Claims bind only to
// Ready classes.
package moduleclass
