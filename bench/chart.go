package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// series is one line of the chart.
type series struct {
	label string
	color color.RGBA
	pts   [][2]float64 // (N, seconds)
}

// writeChart draws time-to-all-Ready against N per variant: the single workspace, raw
// terraform (a workspace each) and Terraplane from a cold controller, each side that ran.
func writeChart(path string, rows []row) error {
	var all []series
	palette := []color.RGBA{{120, 120, 120, 255}, {200, 60, 40, 255}, {40, 90, 200, 255}, {90, 90, 90, 255}, {230, 140, 30, 255},
		{40, 160, 90, 255}, {60, 60, 60, 255}, {160, 40, 160, 255}, {20, 150, 170, 255}}
	byVariant := map[string][3]*series{}
	var order []string
	for _, r := range rows {
		if r.start != "cold" {
			continue
		}
		s, ok := byVariant[r.variant]
		if !ok {
			i := len(order) * 3
			s = [3]*series{
				{label: "one workspace (" + r.variant + ")", color: palette[i%9]},
				{label: "raw terraform (" + r.variant + ")", color: palette[(i+1)%9]},
				{label: "Terraplane, cold (" + r.variant + ")", color: palette[(i+2)%9]},
			}
			byVariant[r.variant] = s
			order = append(order, r.variant)
		}
		for i, d := range []time.Duration{r.single.applied(), r.raw.ready.last, r.tp.ready.last} {
			if d > 0 {
				s[i].pts = append(s[i].pts, [2]float64{float64(r.n), d.Seconds()})
			}
		}
	}
	for _, v := range order {
		for _, s := range byVariant[v] {
			if len(s.pts) > 0 {
				all = append(all, *s)
			}
		}
	}
	img := plot(all)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func plot(all []series) *image.RGBA {
	const w, h, left, right, top, bottom = 800, 500, 70, 20, 40, 60
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	maxX, maxY := 1.0, 1.0
	for _, s := range all {
		for _, p := range s.pts {
			maxX, maxY = max(maxX, p[0]), max(maxY, p[1])
		}
	}
	maxY *= 1.1
	px := func(x, y float64) (int, int) {
		return left + int(x/maxX*float64(w-left-right)), h - bottom - int(y/maxY*float64(h-top-bottom))
	}
	black := color.RGBA{0, 0, 0, 255}
	line(img, left, h-bottom, w-right, h-bottom, black)
	line(img, left, top, left, h-bottom, black)
	for i := 0; i <= 5; i++ {
		y := maxY * float64(i) / 5
		_, yy := px(0, y)
		line(img, left-4, yy, left, yy, black)
		text(img, 5, yy+4, fmt.Sprintf("%.0fs", y), black)
		x := maxX * float64(i) / 5
		xx, _ := px(x, 0)
		line(img, xx, h-bottom, xx, h-bottom+4, black)
		text(img, xx-8, h-bottom+18, fmt.Sprintf("%.0f", x), black)
	}
	text(img, w/2-60, h-15, "N (claims / workspaces)", black)
	text(img, left, 20, "time until all N are Ready / applied", black)
	for i, s := range all {
		for j := 1; j < len(s.pts); j++ {
			x0, y0 := px(s.pts[j-1][0], s.pts[j-1][1])
			x1, y1 := px(s.pts[j][0], s.pts[j][1])
			line(img, x0, y0, x1, y1, s.color)
		}
		for _, p := range s.pts {
			x, y := px(p[0], p[1])
			for dx := -3; dx <= 3; dx++ {
				for dy := -3; dy <= 3; dy++ {
					img.Set(x+dx, y+dy, s.color)
				}
			}
		}
		line(img, left+20, top+10+i*16, left+40, top+10+i*16, s.color)
		text(img, left+46, top+14+i*16, s.label, s.color)
	}
	return img
}

// line draws a straight line (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
