<?php
/**
 * Tests of the tag vocabulary and of what changes and pages are tagged with.
 *
 * @package RamjetCache
 */

use PHPUnit\Framework\TestCase;
use Ramjet\Cache\Tags;

/**
 * Tags.
 */
final class TagsTest extends TestCase {

	/** @var Tags */
	private $tags;

	protected function setUp(): void {
		WpStubs::reset();
		$this->tags = new Tags( 'rjabc_1' );
		// Post 10 (B) in category 5 (child of 3) and tag 7, by author 2; neighbours 9 and 11.
		WpStubs::$posts[10] = self::post( 10, '2024-01-02 10:00:00' );
		WpStubs::$posts[12] = self::post( 12, '2024-01-04 10:00:00' );
		WpStubs::$terms[10] = array( self::term( 5, 'category' ), self::term( 7, 'post_tag' ) );
		WpStubs::$terms[12] = array( self::term( 5, 'category' ) );
		WpStubs::$ancestors[5] = array( 3 );
		WpStubs::$adjacent     = array(
			'before' => array( 9 ),
			'after'  => array( 11 ),
		);
	}

	private static function post( $id, $date ) {
		return (object) array(
			'ID'          => $id,
			'post_type'   => 'post',
			'post_author' => 2,
			'post_date'   => $date,
			'post_parent' => 0,
			'post_status' => 'publish',
		);
	}

	private static function term( $id, $taxonomy ) {
		return (object) array(
			'term_id'  => $id,
			'taxonomy' => $taxonomy,
		);
	}

	public function test_site_tag_differs_per_install_and_blog() {
		$a = Tags::site_for( '/srv/a/', 1 );
		$this->assertMatchesRegularExpression( '/^rj[0-9a-f]{3}_1$/', $a );
		$this->assertNotSame( $a, Tags::site_for( '/srv/a/', 2 ) );
		$this->assertNotSame( $a, Tags::site_for( '/srv/b/', 1 ) );
	}

	public function test_tag_names_cannot_carry_purge_syntax() {
		$this->assertSame( 'rjabc_1.post.42', $this->tags->tag( 'post', 42 ) );
		$this->assertSame( 'rjabc_1.type.my_type_', $this->tags->tag( 'type', 'my,type*' ) );
		$this->assertSame( 'rjabc_1.home', $this->tags->tag( 'home' ) );
	}

	public function test_post_change_purges_archives_listing_it_but_not_pages_naming_its_terms() {
		$got = $this->tags->for_post_change( WpStubs::$posts[10] );
		$want = array(
			'rjabc_1.post.10',
			'rjabc_1.type.post',
			'rjabc_1.home',
			'rjabc_1.front',
			'rjabc_1.feed',
			'rjabc_1.author.2',
			'rjabc_1.date.2024',
			'rjabc_1.date.202401',
			'rjabc_1.date.20240102',
			'rjabc_1.term.5',
			'rjabc_1.term.3',
			'rjabc_1.term.7',
			'rjabc_1.post.9',
			'rjabc_1.post.11',
		);
		$this->assertSame( $want, $got );
		foreach ( $got as $tag ) {
			$this->assertStringNotContainsString( 'ref.', $tag, 'a post change must not purge every page that merely names its terms or author' );
			$this->assertNotSame( 'rjabc_1', $tag, 'a post change must not purge the whole site' );
		}
	}

	public function test_term_change_purges_its_archives_and_mentions() {
		$this->assertSame( array( 'rjabc_1.term.5', 'rjabc_1.term.3', 'rjabc_1.termref.5' ), $this->tags->for_term_change( 5, 'category' ) );
	}

	public function test_comment_change_purges_its_post_and_comment_feeds() {
		$this->assertSame( array( 'rjabc_1.post.10', 'rjabc_1.comments' ), $this->tags->for_comment_change( (object) array( 'comment_post_ID' => '10' ) ) );
	}

	public function test_single_post_page_is_tagged_with_what_it_shows() {
		WpStubs::$is      = array( 'is_singular' => true );
		WpStubs::$queried = 10;
		$got              = $this->tags->for_page();
		$this->assertSame( array( 'rjabc_1', 'rjabc_1.post.10', 'rjabc_1.authorref.2', 'rjabc_1.termref.5', 'rjabc_1.termref.7' ), $got );
		$this->assertNotContains( 'rjabc_1.term.5', $got, 'a post page is not the category archive' );
	}

	public function test_category_archive_is_tagged_with_its_term_and_every_post_listed() {
		WpStubs::$is         = array(
			'is_archive'  => true,
			'is_category' => true,
		);
		WpStubs::$queried    = 5;
		$GLOBALS['wp_query'] = (object) array( 'posts' => array( WpStubs::$posts[10], WpStubs::$posts[12] ) );
		$got                 = $this->tags->for_page( array( 12 ) );
		foreach ( array( 'rjabc_1', 'rjabc_1.term.5', 'rjabc_1.post.10', 'rjabc_1.post.12', 'rjabc_1.termref.7' ) as $want ) {
			$this->assertContains( $want, $got );
		}
		$this->assertSame( count( $got ), count( array_unique( $got ) ), 'tags are deduped' );
	}

	public function test_home_feed_and_date_archive_tags() {
		WpStubs::$is = array(
			'is_front_page' => true,
			'is_home'       => true,
		);
		$this->assertSame( array( 'rjabc_1', 'rjabc_1.front', 'rjabc_1.home' ), $this->tags->for_page() );

		WpStubs::$is = array(
			'is_feed'         => true,
			'is_comment_feed' => true,
		);
		$this->assertSame( array( 'rjabc_1', 'rjabc_1.feed', 'rjabc_1.comments' ), $this->tags->for_page() );

		WpStubs::$is   = array(
			'is_archive' => true,
			'is_date'    => true,
		);
		WpStubs::$vars = array(
			'year'     => 2024,
			'monthnum' => 1,
		);
		$this->assertSame( array( 'rjabc_1', 'rjabc_1.date.202401' ), $this->tags->for_page() );
	}

	public function test_rest_tags() {
		$this->assertSame( array( 'rjabc_1', 'rjabc_1.rest', 'rjabc_1.post.10', 'rjabc_1.post.12' ), $this->tags->for_rest( array( 10, 12, 10 ) ) );
	}
}
